/* Force-included (gcc -include) into every C file of the agent's CPython as the Debian 11 build
 * root builds it (agent/packaging/buildroot.sh; ADR 0036): glibc 2.29 gave exp, exp2, log, log2
 * and pow new symbol versions (the same functions without the SVID error-handling wrapper), so a
 * call compiled against Debian 11's libm needs GLIBC_2.29 and the bundle would not load on RHEL 8
 * (glibc 2.28). These directives bind the calls to the versions every glibc since the
 * architecture's first has, whose wrapper, in glibc's POSIX mode (the only one a program linked
 * since 2.27 gets), sets errno to EDOM or ERANGE and returns the same values as the new ones:
 * CPython's math module sees the same results and errno. (sem_clockwait, 2.30, is held back by
 * configure's ac_cv_func_sem_clockwait=no in buildroot.sh instead.) */
#if defined(__GNUC__) && !defined(__ASSEMBLER__)
#  if defined(__x86_64__)
#    define IOWATT_LIBM_OLD "GLIBC_2.2.5"
#  elif defined(__aarch64__)
#    define IOWATT_LIBM_OLD "GLIBC_2.17"
#  else
#    error "python-glibc-compat.h: no old libm symbol version known for this architecture"
#  endif
__asm__(".symver exp,exp@" IOWATT_LIBM_OLD);
__asm__(".symver exp2,exp2@" IOWATT_LIBM_OLD);
__asm__(".symver log,log@" IOWATT_LIBM_OLD);
__asm__(".symver log2,log2@" IOWATT_LIBM_OLD);
__asm__(".symver pow,pow@" IOWATT_LIBM_OLD);
#  undef IOWATT_LIBM_OLD
#endif
