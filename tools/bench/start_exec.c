// SPDX-License-Identifier: MIT
/* start_exec PROGRAM [ARGS...]: runs PROGRAM with start_stamp.so preloaded
 * (path in START_STAMP) and prints "WALL ms" (fork to exit) to stderr; exits
 * with PROGRAM's status. Part of tools/bench/start_phases.sh. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  if (argc < 2 || getenv("START_STAMP") == NULL) {
    fprintf(stderr, "usage: START_STAMP=start_stamp.so start_exec PROGRAM [ARGS...]\n");
    return 2;
  }
  char when[64];
  const double t0 = now_ms();
  snprintf(when, sizeof when, "%.3f", t0);
  setenv("START_EXEC_MS", when, 1);
  const pid_t pid = fork();
  if (pid < 0) return 125;
  if (pid == 0) {
    setenv("LD_PRELOAD", getenv("START_STAMP"), 1);
    execvp(argv[1], argv + 1);
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return 125;
  fprintf(stderr, "WALL %.2f\n", now_ms() - t0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
