// SPDX-License-Identifier: MIT
/* start_stamp.so: an LD_PRELOAD library that splits a process's start into
 * phases for tools/bench/start_phases.sh (issue 15, docs/performance.md).
 *
 * Prints to stderr at exit, in ms:
 *   "STAMP loader=L init=I main=M" where
 *   loader  from START_EXEC_MS (set by start_exec just before it forks and
 *           execs the program) to this library's constructor: the fork, the
 *           kernel's exec, and the dynamic loader mapping and relocating
 *           every library (what runs before any initializer of the program);
 *   init    from __libc_start_main (interposed here) to main(): the
 *           program's own static initializers (C++ runtime, Protobuf
 *           registrations, globals);
 *   main    from main() to this library's destructor (exit handlers).
 * Plain C, no qpconnect code; works for any dynamically linked program,
 * cmtime included. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*main_fn)(int, char**, char**);
typedef int (*start_fn)(main_fn, int, char**, void (*)(void), void (*)(void), void (*)(void),
                        void*);

static double t_ctor, t_start, t_main;
static main_fn real_main;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

__attribute__((constructor(101))) static void stamp_ctor(void) { t_ctor = now_ms(); }

static int stamp_main(int argc, char** argv, char** envp) {
  t_main = now_ms();
  return real_main(argc, argv, envp);
}

__attribute__((destructor)) static void stamp_dtor(void) {
  const double t_end = now_ms();
  const char* exec_ms = getenv("START_EXEC_MS");
  if (exec_ms == NULL || t_main == 0) return;
  fprintf(stderr, "STAMP loader=%.2f init=%.2f main=%.2f\n", t_ctor - atof(exec_ms),
          t_main - t_start, t_end - t_main);
}

int __libc_start_main(main_fn main, int argc, char** argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void* stack_end) {
  t_start = now_ms();
  real_main = main;
  start_fn real = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
  return real(stamp_main, argc, argv, init, fini, rtld_fini, stack_end);
}
