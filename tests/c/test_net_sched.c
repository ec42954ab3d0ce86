/* The barrier rows' schedules (src/net/barrier.c) at P = 1..64, without a network: every unicast
 * a rank sends is one that its peer waits for (same sender, tag and network), every rank waits
 * for each multicast once, nothing is waited for that nobody sends, and a symbolic run of the
 * schedules (each rank advancing while what it waits for has been sent) ends with every rank done
 * and no rank leaving before every rank has arrived (has done its first step). The null row is
 * the one that synchronises nothing. */
#include "../../src/net/net.h"

#include <stdio.h>
#include <string.h>

static lts_step_t st[LTS_NET_MAXP][LTS_NET_MAXSTEPS];
static int ns[LTS_NET_MAXP], pc[LTS_NET_MAXP];
static int sent[LTS_NET_MAXP][LTS_NET_MAXP][64];   /* [from][to][tag]: sent and not yet taken */
static int mc[LTS_NET_MAXP][64];                    /* [from][tag]: multicasts sent */
static int taken_mc[LTS_NET_MAXP][LTS_NET_MAXP][64];

/* Advance every rank but `frozen` while any can; 1 if anything moved. */
static int advance(int p, int frozen) {
    int moved = 0, progress = 1;
    while (progress) {
        progress = 0;
        for (int r = 0; r < p; r++) {
            if (r == frozen) continue;
            while (pc[r] < ns[r]) {
                const lts_step_t *x = &st[r][pc[r]];
                if (x->op == LTS_ST_SEND) sent[r][x->peer][x->tag]++;
                else if (x->op == LTS_ST_MCAST) mc[r][x->tag]++;
                else if (sent[x->peer][r][x->tag] > 0) sent[x->peer][r][x->tag]--;
                else if (mc[x->peer][x->tag] > taken_mc[x->peer][r][x->tag]) taken_mc[x->peer][r][x->tag]++;
                else break;
                pc[r]++;
                progress = moved = 1;
            }
        }
    }
    return moved;
}

/* One row at P = p, with rank `late` arriving after everything else that can happen has: no other
 * rank may be done by then (a barrier), and all must be done after. */
static int check_late(const lts_nbar_t *b, int p, int late) {
    memset(sent, 0, sizeof sent);
    memset(mc, 0, sizeof mc);
    memset(taken_mc, 0, sizeof taken_mc);
    for (int r = 0; r < p; r++) {
        ns[r] = b->schedule(b, r, p, st[r]);
        pc[r] = 0;
        if (ns[r] < 0) return printf("%s P=%d: schedule too long\n", b->name, p), 1;
        for (int i = 0; i < ns[r]; i++) {
            const lts_step_t *x = &st[r][i];
            if (x->tag < 0 || x->tag >= 64 || x->net < 0 || x->net >= b->nets ||
                (x->op != LTS_ST_MCAST && (x->peer < 0 || x->peer >= p || x->peer == r)))
                return printf("%s P=%d rank %d step %d: bad step\n", b->name, p, r, i), 1;
        }
    }
    int is_null = strcmp(b->name, "null") == 0;
    advance(p, late);
    for (int r = 0; r < p && p > 1; r++)
        if (r != late && pc[r] == ns[r] && !is_null)
            return printf("%s P=%d: rank %d left before rank %d arrived\n", b->name, p, r, late), 1;
    advance(p, -1);
    for (int r = 0; r < p; r++) {
        if (pc[r] != ns[r]) return printf("%s P=%d: rank %d stuck at step %d\n", b->name, p, r, pc[r]), 1;
        for (int q = 0; q < p; q++)
            for (int t = 0; t < 64; t++)
                if (sent[r][q][t]) return printf("%s P=%d: %d -> %d tag %d never taken\n", b->name, p, r, q, t), 1;
    }
    return 0;
}

static int check(const lts_nbar_t *b, int p) {
    int bad = 0;
    /* every rank late up to 16; beyond, the first, second, middle and last (each check clears 1 MB) */
    for (int late = 0; late < p; late++)
        if (p <= 16 || late < 2 || late == p / 2 || late == p - 1) bad += check_late(b, p, late);
    return bad;
}

int main(void) {
    int bad = 0, null_caught = 0;
    for (int i = 0; i < lts_nbar_count; i++)
        for (int p = 1; p <= LTS_NET_MAXP; p++) {
            if (strcmp(lts_nbar_rows[i].name, "null") == 0) continue;
            bad += check(&lts_nbar_rows[i], p);
        }
    /* the check itself: a row that synchronises nothing must fail it (null: every rank done at once) */
    {
        const lts_nbar_t *nl = lts_nbar_find("null");
        lts_nbar_t fake = *nl;
        fake.name = "null-as-barrier";
        memset(pc, 0, sizeof pc);
        for (int r = 0; r < 4; r++) ns[r] = fake.schedule(&fake, r, 4, st[r]);
        advance(4, 3);
        null_caught = pc[0] == ns[0];   /* rank 0 "done" while rank 3 has not arrived */
    }
    if (!null_caught) bad++;
    if (!lts_nbar_find("pairwise") || lts_nbar_find("nonesuch")) bad++;
    printf("%d rows x P = 1..%d: %s\n", lts_nbar_count, LTS_NET_MAXP, bad ? "FAILED" : "ok");
    return bad != 0;
}
