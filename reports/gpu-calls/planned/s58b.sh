#!/usr/bin/env bash
# Planned in session 58 (2026-12-07), right after s58a.sh on the same machine (its build/ is
# kept, and /tmp): the GPU tests s58a.sh left unfinished (LIST, default
# /tmp/s58a-unfinished.txt, which s58a.sh leaves; none: skipped), then memcheck over the three sansweeps, as s57a.sh
# ran them for 75bb03f. Unpacks $PACK only if the machine lost build/. About 150 s plus the
# unfinished tests (at most U, 300, seconds).
. reports/gpu-calls/planned/prelude.sh
PACK=${PACK:-.gpu/check-xchg.tar.xz}
[ -x build/tests/rb_gpu_tests ] || { rm -rf build && tar xJf "$PACK"; } || exit 9
machine >$OUT/s58b.txt 2>&1
LIST=${LIST:-/tmp/s58a-unfinished.txt}
[ -s "$LIST" ] && rerun_unfinished "$LIST" "${U:-300}" >>$OUT/s58b.txt 2>&1
memcheck_sansweeps >>$OUT/s58b.txt 2>&1
tar cJf "$OUT/r.tar.xz" -C /tmp r
