/* oneMKL asks this before it picks its kernels: "yes" lets it run AVX-512 on an AMD CPU
   that has it (attnlab/mkl_avx512.py explains when it is loaded). */
int mkl_serv_intel_cpu_true(void) { return 1; }
