//! The text every generated CUDA source starts with.
//!
//! NVRTC compiles without the system headers, and the CUDA math API it builds in covers the
//! math functions, so the prelude declares what the C printer's expressions name and NVRTC does
//! not: the fixed-width integer types and their limits, `NAN`/`INFINITY`, C's `_Bool`, and the
//! `tf_*` helpers of the C prelude (selects, NaN-propagating max/min, torch's floor division,
//! float16/bfloat16 conversions) as device functions with the same names and meanings. Half
//! conversions use the hardware's round-to-nearest-even `cvt` instructions, as torch's CUDA
//! kernels do (`__float2half`, `__float2bfloat16`), through inline PTX: no `cuda_fp16.h`.
//! Plus the block reduction helpers of the row kernels: warp shuffles of every value type.

pub(super) const PRELUDE: &str = r#"typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#define _Bool bool
#define INT64_C(x) x##LL
#define INT8_MIN (-128)
#define INT8_MAX 127
#define INT16_MIN (-32768)
#define INT16_MAX 32767
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT64_MAX 9223372036854775807LL
#define UINT8_MAX 255
#define NAN __int_as_float(0x7fffffff)
#define INFINITY __int_as_float(0x7f800000)
#define TF_D __device__ __forceinline__

/* Set by a kernel that read a data-dependent position out of range; the runtime reads it. */
__device__ int tf_index_error;

TF_D float tf_self(int c, float a, float b) { return c ? a : b; }
TF_D double tf_seld(int c, double a, double b) { return c ? a : b; }
#define TF_SELI(T, c, a, b) ((c) ? (T)(a) : (T)(b))
TF_D int64_t tf_clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }
#define TF_MAXI(a, b) ((a) > (b) ? (a) : (b))
#define TF_MINI(a, b) ((a) < (b) ? (a) : (b))

TF_D float tf_h2f(uint16_t h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
TF_D uint16_t tf_f2h(float f) { uint16_t h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
TF_D float tf_bf2f(uint16_t h) { return __uint_as_float((uint32_t)h << 16); }
TF_D uint16_t tf_f2bf(float f) { uint16_t h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
TF_D float tf_rh(float f) { return tf_h2f(tf_f2h(f)); }
TF_D float tf_rbf(float f) { return tf_bf2f(tf_f2bf(f)); }

TF_D float tf_maxf(float a, float b) { return ((a != a) | (a > b)) ? a : b; }
TF_D float tf_minf(float a, float b) { return ((a != a) | (a < b)) ? a : b; }
TF_D double tf_maxd(double a, double b) { return ((a != a) | (a > b)) ? a : b; }
TF_D double tf_mind(double a, double b) { return ((a != a) | (a < b)) ? a : b; }

/* torch's floor division and remainder for floating point (sign of the divisor). */
#define TF_FLOORDIV(T, SFX) \
TF_D T tf_floordiv##SFX(T a, T b) { \
  if (b == 0) return a / b; \
  T m = fmod##SFX(a, b); T d = (a - m) / b; \
  if (m != 0 && ((b < 0) != (m < 0))) d -= 1; \
  if (d != 0) { T f = floor##SFX(d); if (d - f > (T)0.5) f += 1; return f; } \
  return copysign##SFX((T)0, a / b); \
} \
TF_D T tf_rem##SFX(T a, T b) { \
  T m = fmod##SFX(a, b); \
  if (m != 0 && ((b < 0) != (m < 0))) m += b; \
  return m; \
}
TF_FLOORDIV(float, f)
TF_FLOORDIV(double, )
/* Python's floor division and remainder of integers (sign of the divisor): a symbolic int
   used as a number (`lower::symnum`). */
TF_D int64_t tf_floordivi(int64_t a, int64_t b) {
  int64_t q = a / b;
  return q - ((a % b != 0) & ((a < 0) != (b < 0)));
}
TF_D int64_t tf_remi(int64_t a, int64_t b) {
  int64_t r = a % b;
  return r + ((r != 0) & ((r < 0) != (b < 0))) * b;
}

/* A lane's partner value in a butterfly (xor) warp reduction, for every value type. */
TF_D float tf_shfl(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
TF_D double tf_shfl(double v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
TF_D int64_t tf_shfl(int64_t v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
TF_D int32_t tf_shfl(int32_t v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
TF_D int16_t tf_shfl(int16_t v, int o) { return (int16_t)__shfl_xor_sync(0xffffffffu, (int)v, o); }
TF_D int8_t tf_shfl(int8_t v, int o) { return (int8_t)__shfl_xor_sync(0xffffffffu, (int)v, o); }
TF_D uint8_t tf_shfl(uint8_t v, int o) { return (uint8_t)__shfl_xor_sync(0xffffffffu, (int)v, o); }
TF_D bool tf_shfl(bool v, int o) { return __shfl_xor_sync(0xffffffffu, (int)v, o) != 0; }

"#;
