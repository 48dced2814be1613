"""Peer RMSNorm kernels run by scripts/peers.py (imported only there, after torch)."""
