/* LD_PRELOAD shim that makes a real redis-server read the testbed's virtual wall clock.
 *
 * Why our own: libfaketime 0.9.10 deadlocks redis-server at start-up here (its dlsym runs
 * inside jemalloc's initialisation). This shim never allocates and never calls dlsym: the
 * real clock is read with the raw syscall, and the virtual time comes from an 8-byte file
 * (int64 microseconds since the epoch) that the testbed mmaps and writes.
 *
 * Only wall-clock reads are faked (clock_gettime REALTIME*, gettimeofday, time); the monotonic
 * clock stays real, so the server's event loop and cron keep running normally. A value of 0
 * means "use real time". The file is named by TESTBED_CLOCK_FILE.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int64_t* virtual_us;
static int initialised;

static int64_t read_virtual_us(void) {
  if (!initialised) {
    const char* path = getenv("TESTBED_CLOCK_FILE");
    if (path) {
      int fd = open(path, O_RDONLY | O_CLOEXEC);
      if (fd >= 0) {
        void* p = mmap(0, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) virtual_us = (volatile int64_t*)p;
        close(fd);
      }
    }
    initialised = 1;
  }
  return virtual_us ? __atomic_load_n(virtual_us, __ATOMIC_ACQUIRE) : 0;
}

int clock_gettime(clockid_t id, struct timespec* ts) {
  if (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) {
    int64_t us = read_virtual_us();
    if (us > 0) {
      ts->tv_sec = us / 1000000;
      ts->tv_nsec = (us % 1000000) * 1000;
      return 0;
    }
  }
  return (int)syscall(SYS_clock_gettime, id, ts);
}

// glibc declares gettimeofday's tv nonnull, but the kernel accepts NULL and so must the shim: the
// check lives in a function of its own, which carries no such attribute.
static void fill_timeval(struct timeval* tv, int64_t us) {
  if (tv) {
    tv->tv_sec = us / 1000000;
    tv->tv_usec = us % 1000000;
  }
}

int gettimeofday(struct timeval* tv, void* tz) {
  int64_t us = read_virtual_us();
  if (us > 0) {
    fill_timeval(tv, us);
    return 0;
  }
  return (int)syscall(SYS_gettimeofday, tv, tz);
}

time_t time(time_t* out) {
  struct timeval tv;
  gettimeofday(&tv, 0);
  if (out) *out = tv.tv_sec;
  return tv.tv_sec;
}
