// SPDX-License-Identifier: MIT
// What a process's first random nonce costs (issue 15, docs/performance.md):
// getrandom(2), then OpenSSL's RAND_bytes twice (its first call initialises
// the DRBG and configuration). Run it in the lab: tools/lab/lab-run --
// BUILD/tools/bench/nonce_probe
#include <openssl/rand.h>
#include <sys/random.h>

#include <chrono>
#include <cstdio>

int main() {
  using Clock = std::chrono::steady_clock;
  auto us = [](Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); };
  unsigned char b[16];
  const auto t0 = Clock::now();
  if (getrandom(b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) return 1;
  const auto t1 = Clock::now();
  if (RAND_bytes(b, sizeof b) != 1) return 1;
  const auto t2 = Clock::now();
  if (RAND_bytes(b, sizeof b) != 1) return 1;
  const auto t3 = Clock::now();
  std::printf("getrandom_us=%.1f rand_bytes_first_us=%.1f rand_bytes_second_us=%.1f\n", us(t1 - t0),
              us(t2 - t1), us(t3 - t2));
  return 0;
}
