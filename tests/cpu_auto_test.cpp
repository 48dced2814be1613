// auto's picks by M as well as H: the small-M table (kernels/auto_by_m.inc, generated from
// reports/auto/h200-by-m.csv by scripts/auto_table.py) for fwd and add, the M=16384
// crossovers past it, and never a strategy that cannot hold the row. Suites are named Auto*.
#include <gtest/gtest.h>

#include "kernels/launchers.h"

namespace rb {
namespace {

Problem problem(Op op, DType x, std::int64_t M, std::int64_t H) { return Problem::of(op, M, H, x, x, x); }

TEST(AutoByM, DecodeShapesTakeChunkedWhereTheSweepShowedIt) {
  // M=1 H=1024 bf16: chunked 1.9 us against warp-row 2.6 us in issue 11's measurement, and in
  // the committed sweep.
  EXPECT_EQ(kern::auto_pick_fwd(problem(Op::fwd, DType::bf16, 1, 1024)), kern::Strategy::chunked);
  EXPECT_EQ(kern::auto_pick_fwd(problem(Op::fwd, DType::bf16, 200, 300)), kern::Strategy::chunked);
  EXPECT_EQ(kern::auto_pick_add(problem(Op::add, DType::bf16, 1, 512)), kern::Strategy::chunked);
  // Large M keeps the crossovers measured at M=16384.
  EXPECT_EQ(kern::auto_pick_fwd(problem(Op::fwd, DType::bf16, 16384, 1024)), kern::Strategy::warp_row);
  EXPECT_EQ(kern::auto_pick_fwd(problem(Op::fwd, DType::bf16, 4096, 512)), kern::Strategy::warp_row);
  EXPECT_EQ(kern::auto_pick_add(problem(Op::add, DType::bf16, 16384, 1024)), kern::Strategy::row_vector);
  // Past the table's H: the H-only table.
  EXPECT_EQ(kern::auto_pick_fwd(problem(Op::fwd, DType::bf16, 1, 40000)), kern::Strategy::chunked);
  EXPECT_FALSE(kern::auto_pick_by_m(problem(Op::fwd, DType::bf16, 1, 40000)).has_value());
  EXPECT_FALSE(kern::auto_pick_by_m(problem(Op::fwd, DType::bf16, 100000, 1024)).has_value());
  // The backward ops are not in it (auto was already the fastest there at every M).
  EXPECT_FALSE(kern::auto_pick_by_m(problem(Op::bwd, DType::bf16, 1, 1024)).has_value());
}

TEST(AutoAdd, ChunkedBlockSizes) {
  // The block sizes run 30 measured: 512 threads of 2 vectors at bf16 H=8192 (256 before),
  // 128 at H=4096; fp32 x or an fp32 weight keep the 4-vector sizing.
  EXPECT_EQ(kern::add_chunked_threads(DType::bf16, DType::bf16, DType::bf16, 8192), 512);
  EXPECT_EQ(kern::add_chunked_threads(DType::bf16, DType::bf16, DType::bf16, 4096), 128);
  EXPECT_EQ(kern::add_chunked_threads(DType::bf16, DType::f32, DType::bf16, 8192), 256);
  EXPECT_EQ(kern::add_chunked_threads(DType::f32, DType::f32, DType::f32, 4096), 256);
}

TEST(AutoAdd, ChunkedWhereItsRowsGoThroughSharedMemory) {
  // 512-thread rows whose x and r bodies (ceil(H / 16 bytes of x) vectors of each) take 32 KB
  // and more go through shared memory, and 16-bit rows of smaller blocks from 3 vectors a
  // thread of the launched block (64, 128 or 256 threads); other small blocks keep the L1
  // passes.
  EXPECT_EQ(kern::add_chunked_image_bytes(DType::bf16, DType::bf16, DType::bf16, 8192), 32u * 1024);
  EXPECT_EQ(kern::add_chunked_image_bytes(DType::bf16, DType::bf16, DType::bf16, 8184), 1023u * 32);  // 256 x 4
  EXPECT_EQ(kern::add_chunked_image_bytes(DType::bf16, DType::bf16, DType::bf16, 4096), 512u * 32);   // 128 x 4
  EXPECT_EQ(kern::add_chunked_image_bytes(DType::f16, DType::f16, DType::f16, 2048), 256u * 32);      // 64 x 4
  EXPECT_EQ(kern::add_chunked_image_bytes(DType::bf16, DType::bf16, DType::bf16, 3072), 384u * 32);   // 128 x 3
  EXPECT_EQ(kern::add_chunked_image_bytes(DType::bf16, DType::bf16, DType::bf16, 1024), 0u);  // 64 x 2
  EXPECT_EQ(kern::add_chunked_image_bytes(DType::bf16, DType::bf16, DType::bf16, 4097), 0u);  // 513 in 256
  EXPECT_EQ(kern::add_chunked_image_bytes(DType::bf16, DType::bf16, DType::bf16, 16384), 64u * 1024);
  EXPECT_EQ(kern::add_chunked_image_bytes(DType::f32, DType::f32, DType::f32, 4097), 1025u * 32);
  EXPECT_EQ(kern::add_chunked_image_bytes(DType::f32, DType::f32, DType::f32, 4096), 0u);  // 256 threads
  EXPECT_EQ(kern::add_chunked_image_bytes(DType::bf16, DType::bf16, DType::f32, 16384), 96u * 1024);
  EXPECT_EQ(kern::add_chunked_image_bytes(DType::bf16, DType::bf16, DType::f32, 8192), 0u);  // 256 threads
  EXPECT_EQ(kern::add_chunked_image_bytes(DType::bf16, DType::f32, DType::bf16, 4096), 0u);  // fp32 w
  // auto takes them where x, w and r share a dtype: chunked led row-vector at every such row
  // measured (docs/perf-notes.md runs 31 and 41), 10240 included, where its L1 passes had not.
  for (const std::int64_t H : {2048, 3072, 4096, 6144, 8184, 8185, 8192, 10240, 12288, 16384})
    EXPECT_EQ(kern::auto_pick_add(problem(Op::add, DType::bf16, 16384, H)), kern::Strategy::chunked) << H;
  EXPECT_EQ(kern::auto_pick_add(problem(Op::add, DType::f16, 16384, 12288)), kern::Strategy::chunked);
  for (const std::int64_t H : {4097, 6144, 8192})
    EXPECT_EQ(kern::auto_pick_add(problem(Op::add, DType::f32, 16384, H)), kern::Strategy::chunked) << H;
  for (const std::int64_t H : {1024, 2049, 4097})
    EXPECT_EQ(kern::auto_pick_add(problem(Op::add, DType::bf16, 16384, H)), kern::Strategy::row_vector) << H;
  // fp32 rows of 4-32 KB that chunked holds in registers (add_chunked_holds, run 51).
  for (const std::int64_t H : {1024, 2048, 4096})
    EXPECT_EQ(kern::auto_pick_add(problem(Op::add, DType::f32, 16384, H)), kern::Strategy::chunked) << H;
  EXPECT_TRUE(kern::add_chunked_holds(DType::bf16, DType::bf16, DType::bf16, 16384, 4096));
  EXPECT_FALSE(kern::add_chunked_holds(DType::bf16, DType::bf16, DType::bf16, 16384, 1024));
  EXPECT_FALSE(kern::add_chunked_holds(DType::bf16, DType::bf16, DType::bf16, 16384, 16384));
  EXPECT_FALSE(kern::add_chunked_holds(DType::bf16, DType::f32, DType::bf16, 16384, 4096));
  EXPECT_TRUE(kern::add_chunked_holds(DType::f32, DType::f32, DType::f32, 16384, 8192));
  EXPECT_FALSE(kern::add_chunked_holds(DType::f32, DType::f32, DType::f32, 16384, 8193));
  EXPECT_FALSE(kern::add_chunked_holds(DType::bf16, DType::bf16, DType::bf16, 16384, 4097));  // odd rows: not measured
  EXPECT_FALSE(kern::add_chunked_holds(DType::bf16, DType::bf16, DType::bf16, 1024, 4096));   // lost at M=1024
  // How it holds them (run 65): 16-bit 2 vectors a thread, s stored late up to 512 vectors.
  for (const DType x : {DType::bf16, DType::f16}) {
    for (const std::int64_t H : {2048, 3080, 4096}) {
      EXPECT_EQ(kern::add_held_shape(x, H).vecs, 2) << H;
      EXPECT_TRUE(kern::add_held_shape(x, H).late_s) << H;
    }
    for (const std::int64_t H : {4104, 8192}) {
      EXPECT_EQ(kern::add_held_shape(x, H).vecs, 2) << H;
      EXPECT_FALSE(kern::add_held_shape(x, H).late_s) << H;
    }
  }
  EXPECT_EQ(kern::add_held_shape(DType::f32, 4096).vecs, 4);
  EXPECT_FALSE(kern::add_held_shape(DType::f32, 4096).late_s);
  // Not with an fp32 residual under 16-bit x (not measured on it).
  EXPECT_EQ(kern::auto_pick_add(Problem::of(Op::add, 16384, 16384, DType::bf16, DType::bf16, DType::f32)),
            kern::Strategy::row_vector);
  // Below the small-M table's largest M its measured picks come first (fp32 H=8192 M=4096:
  // row-vector, within the table's 3% of chunked: 137.7 us against 135.3).
  EXPECT_EQ(kern::auto_pick_add(problem(Op::add, DType::f32, 4096, 8192)), kern::Strategy::row_vector);
}

TEST(AutoBwd, RowVectorWhereItHoldsTheRowChunkedElsewhere) {
  // 16-bit past 8192 took staged until row-vector's backward prefetched the next row (bf16
  // M=16384 H=16384: 88.9% of copy against staged's 77.1%, docs/perf-notes.md run 23).
  EXPECT_EQ(kern::auto_pick_bwd(problem(Op::bwd, DType::bf16, 16384, 16384)), kern::Strategy::row_vector);
  EXPECT_EQ(kern::auto_pick_bwd(problem(Op::bwd, DType::bf16, 16384, 4096)), kern::Strategy::row_vector);
  EXPECT_EQ(kern::auto_pick_bwd(problem(Op::add_bwd, DType::f16, 16384, 16384)), kern::Strategy::row_vector);
  // Odd H (rows not 16-byte aligned): row-vector, its columns shifted a block at a time.
  EXPECT_EQ(kern::auto_pick_bwd(problem(Op::bwd, DType::bf16, 16384, 4097)), kern::Strategy::row_vector);
  EXPECT_EQ(kern::auto_pick_bwd(problem(Op::add_bwd, DType::f32, 16384, 4097)), kern::Strategy::row_vector);
  EXPECT_EQ(kern::auto_pick_bwd(problem(Op::add_bwd, DType::bf16, 16384, 4097)), kern::Strategy::row_vector);
  EXPECT_EQ(kern::auto_pick_bwd(problem(Op::bwd, DType::bf16, 16384, 8193)), kern::Strategy::row_vector);
  // ... add-bwd in 16-bit at every such H, with its shifted ring and overhang (run 60; run
  // 24's table had sent H <= 2048 and H > 8192 to chunked).
  EXPECT_EQ(kern::auto_pick_bwd(problem(Op::add_bwd, DType::bf16, 16384, 1025)), kern::Strategy::row_vector);
  EXPECT_EQ(kern::auto_pick_bwd(problem(Op::add_bwd, DType::f16, 16384, 8193)), kern::Strategy::row_vector);
  EXPECT_EQ(kern::auto_pick_bwd(problem(Op::add_bwd, DType::bf16, 16384, 16377)), kern::Strategy::row_vector);
  EXPECT_EQ(kern::auto_pick_bwd(problem(Op::add_bwd, DType::bf16, 16384, 8192)), kern::Strategy::row_vector);
  // Rows past what row-vector holds, shifted or not: chunked.
  EXPECT_EQ(kern::auto_pick_bwd(problem(Op::bwd, DType::bf16, 16384, 16383)), kern::Strategy::chunked);
  EXPECT_EQ(kern::auto_pick_bwd(problem(Op::bwd, DType::bf16, 16384, 16378)), kern::Strategy::chunked);
  EXPECT_EQ(kern::auto_pick_bwd(problem(Op::bwd, DType::bf16, 16384, 16377)), kern::Strategy::row_vector);
  EXPECT_EQ(kern::auto_pick_bwd(problem(Op::bwd, DType::f32, 16384, 8190)), kern::Strategy::chunked);
  EXPECT_EQ(kern::auto_pick_bwd(problem(Op::bwd, DType::f32, 16384, 8189)), kern::Strategy::row_vector);
  // Past one block's row (16384 16-bit columns, 8192 fp32): row-vector's slices as a cluster
  // where the rows are aligned and the device runs clusters (bwd_row_vector_max_H: 8 blocks'
  // rows; one block's on a machine without an sm_90 GPU, as in CI); chunked where the rows are
  // not aligned, or past 8 blocks' rows (docs/perf-notes.md run 34).
  for (DType x : {DType::bf16, DType::f32}) {
    const std::int64_t block = kern::bwd_row_vector_block_H(x), max = kern::bwd_row_vector_max_H(x);
    EXPECT_TRUE(max == block || max == 8 * block) << max;
    for (const std::int64_t H : {2 * block, 4 * block, 8 * block}) {
      const kern::Strategy want = H <= max ? kern::Strategy::row_vector : kern::Strategy::chunked;
      EXPECT_EQ(kern::auto_pick_bwd(problem(Op::bwd, x, 16384, H)), want) << H;
      EXPECT_EQ(kern::auto_pick_bwd(problem(Op::add_bwd, x, 1024, H)), want) << H;
    }
    EXPECT_EQ(kern::auto_pick_bwd(problem(Op::bwd, x, 1024, 8 * block + 8)), kern::Strategy::chunked);
    EXPECT_EQ(kern::auto_pick_bwd(problem(Op::bwd, x, 16384, 2 * block + 1)), kern::Strategy::chunked);
    EXPECT_EQ(kern::auto_pick_bwd(problem(Op::add_bwd, x, 1024, 4 * block + 1)), kern::Strategy::chunked);
  }
}

TEST(AutoBwd, AlignmentIsTheRowsNotHAlone) {
  // Rows are 16-byte aligned when the base pointers are and the stride is a whole number of
  // 16 bytes, as row-vector's kernel asks (run 60: a base one element off at bf16 H=16384 ran
  // row-vector at 49% of copy against chunked's 77-82, H100).
  const auto with = [](Op op, DType x, std::int64_t H, std::int64_t stride, std::int64_t base_align) {
    return kern::auto_pick_bwd(Problem::of(op, 16384, H, x, x, x, stride, base_align));
  };
  for (Op op : {Op::bwd, Op::add_bwd}) {
    // A base one element off: shifted, so one block's row less the shift's room.
    EXPECT_EQ(with(op, DType::bf16, 16384, 16384, 2), kern::Strategy::chunked);
    EXPECT_EQ(with(op, DType::bf16, 16377, 16377, 2), kern::Strategy::row_vector);
    EXPECT_EQ(with(op, DType::bf16, 16376, 16376, 2), kern::Strategy::row_vector);
    EXPECT_EQ(with(op, DType::f32, 8192, 8192, 4), kern::Strategy::chunked);
    EXPECT_EQ(with(op, DType::f32, 8189, 8189, 4), kern::Strategy::row_vector);
    EXPECT_EQ(with(op, DType::bf16, 4096, 4096, 2), kern::Strategy::row_vector);
    EXPECT_EQ(with(op, DType::bf16, 16384, 16384, 16), kern::Strategy::row_vector);
    // The stride decides, not H: a stride of H + 1 (skewed) shifts every row; a padded stride
    // of whole 16 bytes keeps an odd H aligned, so the whole block's row is row-vector's.
    EXPECT_EQ(with(op, DType::bf16, 16384, 16385, 16), kern::Strategy::chunked);
    EXPECT_EQ(with(op, DType::bf16, 16383, 16400, 16), kern::Strategy::row_vector);
    EXPECT_EQ(with(op, DType::bf16, 16383, 16383, 16), kern::Strategy::chunked);
  }
  // Shifted fp32 rows past one block: row-vector's clusters from one and a half blocks' span
  // to H of two blocks, where they led chunked (run 60), where the device runs clusters.
  const std::int64_t block = kern::bwd_row_vector_block_H(DType::f32);
  const bool clusters = kern::bwd_row_vector_max_H(DType::f32) >= 2 * block;
  const kern::Strategy two = clusters ? kern::Strategy::row_vector : kern::Strategy::chunked;
  for (Op op : {Op::bwd, Op::add_bwd}) {
    EXPECT_EQ(with(op, DType::f32, 2 * block, 2 * block, 4), two);
    EXPECT_EQ(with(op, DType::f32, 12289, 12289, 16), two);
    EXPECT_EQ(with(op, DType::f32, 12285, 12285, 16), kern::Strategy::chunked);  // span 1.5 blocks
    EXPECT_EQ(with(op, DType::f32, 8193, 8193, 16), kern::Strategy::chunked);
    EXPECT_EQ(with(op, DType::f32, 2 * block + 1, 2 * block + 1, 16), kern::Strategy::chunked);
    EXPECT_EQ(with(op, DType::bf16, 16384, 16384, 2), kern::Strategy::chunked);  // 16-bit: chunked
  }
  // add-bwd: the residual stream's dtype sets the room as well as the rows' alignment.
  const auto fp32_residual = [](std::int64_t base_align) {
    const Problem p =
        Problem::of(Op::add_bwd, 16384, 8192, DType::bf16, DType::bf16, DType::f32, 8192, base_align);
    return kern::auto_pick_bwd(p);
  };
  EXPECT_EQ(fp32_residual(2), kern::Strategy::chunked);
  EXPECT_EQ(fp32_residual(16), kern::Strategy::row_vector);
  // One row: its stride does not matter, to the kernel as to auto (rows_aligned16), so an
  // aligned base holds the whole block's row; a base one element off still shifts it.
  for (Op op : {Op::bwd, Op::add_bwd}) {
    const auto one_row = [op](std::int64_t H, std::int64_t base_align) {
      return kern::auto_pick_bwd(Problem::of(op, 1, H, DType::bf16, DType::bf16, DType::bf16, H, base_align));
    };
    EXPECT_EQ(one_row(16383, 16), kern::Strategy::row_vector);
    EXPECT_EQ(one_row(16383, 2), kern::Strategy::chunked);
  }
}

TEST(AutoByM, EveryPickHoldsItsRow) {
  for (DType x : {DType::f32, DType::f16, DType::bf16})
    for (std::int64_t M : {1, 3, 64, 1000, 4096, 5000, 16384})
      for (std::int64_t H = 1; H <= (std::int64_t{1} << 40); H = H * 3 + 1) {  // to rows past any device
        const kern::Strategy f = kern::auto_pick_fwd(problem(Op::fwd, x, M, H));
        if (f == kern::Strategy::warp_row) {
          EXPECT_LE(H, kern::warp_row_max_H(x));
        }
        if (f == kern::Strategy::row_vector) {
          EXPECT_LE(H, kern::row_vector_max_H(x));
        }
        const kern::Strategy b = kern::auto_pick_bwd(problem(Op::bwd, x, M, H));
        if (b == kern::Strategy::row_vector || b == kern::Strategy::staged) {
          EXPECT_LE(H, kern::bwd_row_vector_max_H(x));
        }
        const kern::Strategy a = kern::auto_pick_add(problem(Op::add, x, M, H));
        if (a == kern::Strategy::row_vector) {
          EXPECT_LE(H, kern::add_row_vector_max_H(x, x));
        }
        EXPECT_NE(a, kern::Strategy::warp_row);
      }
}

}  // namespace
}  // namespace rb
