// What two threads can make of this machine at best, for docs/checking.md's
// "Where the time goes": a loop of arithmetic, and random reads of a table
// of 512 MiB (eight independent reads at a time per thread), each run by
// one thread and then by two at once (twice the work). Built and run by
// scripts/two-threads.sh.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#define N (64u<<20)
static uint64_t *table;
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void* compute(void*a){uint64_t x=(uintptr_t)a+1;for(long i=0;i<800000000L;i++){x=x*6364136223846793005ULL+1442695040888963407ULL;x^=x>>17;}return (void*)(uintptr_t)x;}
static void* mem(void*a){uint64_t s[8];for(int j=0;j<8;j++)s[j]=(uintptr_t)a*8+j;uint64_t acc=0;for(long i=0;i<20000000L;i++){for(int j=0;j<8;j++){s[j]=s[j]*6364136223846793005ULL+1;acc+=table[(s[j]>>20)&(N-1)];}}return (void*)(uintptr_t)acc;}
static double run(void*(*f)(void*),int n){pthread_t t[2];double a=now();for(int i=0;i<n;i++)pthread_create(&t[i],0,f,(void*)(uintptr_t)i);for(int i=0;i<n;i++)pthread_join(t[i],0);return now()-a;}
int main(){table=malloc(N*8ULL);for(uint64_t i=0;i<N;i++)table[i]=i;
double c1=run(compute,1),c2=run(compute,2),m1=run(mem,1),m2=run(mem,2);
printf("compute: 1 thread %.2f s, 2 threads (twice the work) %.2f s: %.2fx\n",c1,c2,2*c1/c2);
printf("random reads: 1 thread %.2f s, 2 threads (twice the work) %.2f s: %.2fx\n",m1,m2,2*m1/m2);}
