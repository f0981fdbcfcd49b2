#define _POSIX_C_SOURCE 200809L /* nanosleep */
/* The busy-machine backoff of src/ops/parallel.h (point 5, docs/THREADS.md): the verdict on one
 * parallel product (ops_region_hurt: the helpers' share of the tiles, the caller's wait at the
 * join against its own mean tile time), the backoff's lengths (ops_backoff_next), and ops_team
 * running regions on one thread during a backoff and on the set threads after it. */
#include "parallel.h"
#include "test_util.h"
#include "tfm/threads.h"

#include <stdint.h>
#include <time.h>

#define US ((int_least64_t)1000)
#define MS ((int_least64_t)1000000)

static ops_region_obs obs(int team, size_t chunks, size_t helper, int_least64_t caller_ns, int_least64_t wait_ns) {
    const ops_region_obs o = {team, chunks, helper, caller_ns, wait_ns, 0};
    return o;
}

static void hurt_cases(void) {
    ops_region_obs o;
    /* an idle machine: the helper took half the tiles and ended within a tile of the caller */
    o = obs(2, 16, 8, 800 * US, 90 * US); /* alone: 16 tiles of 100 µs = 1.6 ms; ran 0.89 ms (1.8x) */
    CHECK(!ops_region_hurt(&o), "helper took 8 of 16, waited 90 µs: not hurt");
    /* the boundary: 1.6 ms alone / 1.2 = 1.3333 ms */
    o = obs(2, 16, 8, 800 * US, 533 * US);
    CHECK(!ops_region_hurt(&o), "a speed-up of 1.6/1.333 (just above 1.2) is not hurt");
    o = obs(2, 16, 8, 800 * US, 534 * US);
    CHECK(ops_region_hurt(&o), "a speed-up of 1.6/1.334 (just below 1.2) is hurt");
    o = obs(2, 16, 8, 800 * US, 3 * MS); /* the helper lost its core holding its last tile */
    CHECK(ops_region_hurt(&o), "a join that waited 3 ms for 100 µs tiles is hurt");
    /* the helper's share alone: 2 of 16 tiles is a speed-up of 16/14 */
    o = obs(2, 16, 2, 1400 * US, 0);
    CHECK(ops_region_hurt(&o), "helper took 2 of 16 (1.14x): hurt");
    o = obs(2, 16, 3, 1300 * US, 0);
    CHECK(!ops_region_hurt(&o), "helper took 3 of 16 (1.23x): not hurt");
    o = obs(3, 12, 1, 1100 * US, 0); /* team 3: 12/11 */
    CHECK(ops_region_hurt(&o), "team 3, helpers took 1 of 12: hurt");
    o = obs(3, 12, 4, 800 * US, 0); /* 12/8 */
    CHECK(!ops_region_hurt(&o), "team 3, helpers took 4 of 12: not hurt");
    /* every thread slowed alike (a loaded machine): the caller's own tiles are slow too */
    o = obs(2, 16, 8, 4 * MS, 2 * MS); /* 8 ms alone, ran 6 ms: 1.33x */
    CHECK(!ops_region_hurt(&o), "tiles of 500 µs and a wait of 2 ms: not hurt");
    /* regions that say nothing */
    o = obs(1, 16, 0, 1600 * US, 5 * MS);
    CHECK(!ops_region_hurt(&o), "a team of one is never hurt");
    o = obs(2, 3, 0, 300 * US, 5 * MS);
    CHECK(!ops_region_hurt(&o), "fewer than 2 tiles per thread say nothing");
    o = obs(2, 16, 16, 0, 2 * MS);
    CHECK(!ops_region_hurt(&o), "the helper did every tile (the caller lost its core): not hurt");
    o = obs(2, 8, 4, 100 * US, 99 * US); /* 200 µs alone in 199 µs: would be hurt, but too short */
    CHECK(!ops_region_hurt(&o), "a region under 200 µs is not judged");
    o = obs(2, 8, 4, 100 * US, 100 * US); /* 200 µs alone in 200 µs: 1.0x */
    CHECK(ops_region_hurt(&o), "the same region at 200 µs is judged: hurt");
}

static void length_cases(void) {
    CHECK(ops_backoff_next(0, 1) == OPS_BACKOFF_MIN_NS, "first hurt starts at the minimum");
    CHECK(ops_backoff_next(OPS_BACKOFF_MIN_NS, 1) == 4 * OPS_BACKOFF_MIN_NS, "a repeat multiplies by 4");
    CHECK(ops_backoff_next(OPS_BACKOFF_MAX_NS / 2, 1) == OPS_BACKOFF_MAX_NS, "capped at the maximum");
    CHECK(ops_backoff_next(OPS_BACKOFF_MAX_NS, 1) == OPS_BACKOFF_MAX_NS, "stays at the maximum");
    CHECK(ops_backoff_next(OPS_BACKOFF_MAX_NS, 0) == OPS_BACKOFF_MAX_NS / 2, "a good region halves it");
    CHECK(ops_backoff_next(2 * OPS_BACKOFF_MIN_NS, 0) == OPS_BACKOFF_MIN_NS, "halved to the minimum");
    CHECK(ops_backoff_next(OPS_BACKOFF_MIN_NS, 0) == 0, "below the minimum it ends");
    CHECK(ops_backoff_next(0, 0) == 0, "no backoff stays none");
}

static void sleep_ns(int_least64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* ops_team during and after a backoff. Timing-based: a case whose sleeps overran its window on a
 * loaded machine is run again (up to 20 times) rather than judged. */
static void team_cases(void) {
    tfm_set_threads(2);
    const size_t big = 64 * OPS_PAR_MIN_WORK;
    const ops_region_obs hurt = obs(2, 16, 0, 1600 * US, 0), fine = obs(2, 16, 8, 800 * US, 50 * US);
    const ops_region_obs short_fine = obs(2, 4, 2, 20 * US, 5 * US); /* < OPS_BACKOFF_MIN_REGION_NS */
    CHECK(ops_team(big) == 2, "no backoff at the start: team %d", ops_team(big));
    int judged = 0;
    for (int attempt = 0; attempt < 20 && !judged; attempt++) {
        /* end any backoff left by an earlier attempt: good regions halve it down to 0 */
        for (int i = 0; i < 16; i++) ops_team_report(&fine);
        const int_least64_t t0 = tfm_now_ns();
        ops_team_report(&hurt); /* 2 ms */
        const int during = ops_team(big), during_small = ops_team(1000);
        sleep_ns(3 * MS);
        const int after = ops_team(big);
        ops_team_report(&short_fine); /* ignored: too short to say the helper keeps up */
        ops_team_report(&hurt);       /* the backoff was 2 ms: now 8 ms */
        const int_least64_t t1 = tfm_now_ns();
        sleep_ns(3 * MS);
        const int still = ops_team(big);
        const int_least64_t t2 = tfm_now_ns();
        if (t1 - t0 > 5 * MS || t2 - t1 > 7 * MS) continue; /* overslept: the windows say nothing */
        judged = 1;
        CHECK(during == 1, "a hurt region must start a backoff: team %d", during);
        CHECK(during_small == 1, "small loops stay on one thread: team %d", during_small);
        CHECK(after == 2, "after the 2 ms backoff the team is back: %d", after);
        CHECK(still == 1, "a repeat must back off 8 ms, the short region ignored: team %d after 3 ms", still);
    }
    CHECK(judged, "every attempt overslept its window (machine too loaded to judge the timing)");
    sleep_ns(9 * MS); /* past the last window (8 ms) */
    CHECK(ops_team(big) == 2, "after the last backoff the team is back: %d", ops_team(big));
    tfm_set_threads(0);
}

/* ops_team_long during a backoff: a region opens when the caller alone would take at least
 * OPS_LONG_STALLS of the measured join waits, from the rates the reports measured. */
static void long_cases(void) {
    tfm_set_threads(2);
    const size_t M = 1000000;
    CHECK(ops_team_long(1000) == 1, "a small loop never opens a region: %d", ops_team_long(1000));
    int judged = 0;
    for (int attempt = 0; attempt < 20 && !judged; attempt++) {
        const int_least64_t t0 = tfm_now_ns();
        /* on the first attempt nothing is measured yet: hurt (no helper) without work or wait */
        ops_team_report(&(ops_region_obs){2, 16, 0, 1600 * US, 0, 0});
        const int no_rate = ops_team_long(4000 * M);
        /* hurt by the helpers' share alone, no join wait: a rate (0.1 ns per unit) but no stall */
        ops_team_report(&(ops_region_obs){2, 16, 1, 1500 * US, 0, 16 * M});
        const int no_stall = ops_team_long(4000 * M);
        /* hurt: 16M multiply-adds alone in 1.6 ms (0.1 ns each), held up 1 ms at the join */
        ops_team_report(&(ops_region_obs){2, 16, 0, 1600 * US, 1000 * US, 16 * M});
        const int small = ops_team_long(16 * M), below = ops_team_long(39 * M), above = ops_team_long(41 * M);
        const int plain = ops_team(41 * M);
        if (tfm_now_ns() - t0 > 8 * MS) continue; /* the backoff (>= 8 ms) may have ended: no verdict */
        judged = 1;
        if (attempt == 0) { /* later attempts have the rate and stall of this one */
            CHECK(no_rate == 1, "without a measured rate a backoff keeps every region serial: %d", no_rate);
            CHECK(no_stall == 1, "without a measured stall a backoff keeps every region serial: %d", no_stall);
        }
        CHECK(small == 1, "1.6 ms of work beside a 1 ms stall stays serial: %d", small);
        CHECK(below == 1, "3.9 ms of work is under 4 stalls: %d", below);
        CHECK(above == 2, "4.1 ms of work is over 4 stalls: team %d", above);
        CHECK(plain == 1, "ops_team stays 1 during the backoff: %d", plain);
    }
    CHECK(judged, "every attempt overslept its window (machine too loaded to judge the timing)");
    sleep_ns(OPS_BACKOFF_MAX_NS + 2 * MS);
    CHECK(ops_team_long(16 * M) == 2, "after the backoff every region opens: %d", ops_team_long(16 * M));
    tfm_set_threads(0);
}

int main(void) {
    hurt_cases();
    length_cases();
    team_cases();
    long_cases();
    return test_finish("test_backoff");
}
