// SPDX-License-Identifier: MIT
/* A C99 program using qpconnect through pkg-config and the C API:
 *   cc -std=c99 main.c $(pkg-config --cflags --libs qpconnect)
 * It must compile against the installed <qpconnect/qpconnect.h> and link the
 * shared library libqpconnect.so. Prints the library's version. */
#include <qpconnect/qpconnect.h>
#include <stdio.h>

int main(void) {
  const char* version = qpc_version_string();
  if (version == NULL || version[0] == '\0') {
    fprintf(stderr, "qpc_version_string() returned nothing\n");
    return 1;
  }
  printf("qpconnect %s\n", version);
  return 0;
}
