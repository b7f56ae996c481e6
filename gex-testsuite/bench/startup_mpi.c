/* The MPI counterpart of bench-startup: an empty MPI program that reports,
 * in CLOCK_MONOTONIC nanoseconds, when main began, when MPI_Init returned
 * and when its first MPI_Barrier completed. `cargo xtask bench-startup`
 * builds it with mpicc and runs it under mpirun beside gex-run's jobs. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static unsigned long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv) {
    unsigned long long t_main = now_ns();
    int rank;
    MPI_Init(&argc, &argv);
    unsigned long long t_init = now_ns();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned long long t_barrier = now_ns();
    printf("startup rank %d main %llu init %llu attach %llu barrier %llu\n", rank, t_main, t_init,
           t_init, t_barrier);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
