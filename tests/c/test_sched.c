#include "latscope/latscope.h"
#include "latscope/sched.h"   /* private (src/include) */
#include "check.h"
#include <stdlib.h>
#include <string.h>

int main(void) {
    /* tournament: every pair exactly once, rounds disjoint, partner relation symmetric */
    for (int P = 2; P <= 17; P++) {
        int R = lts_tournament_rounds(P);
        CHECK(R == (P % 2 ? P : P - 1));
        int *met = calloc((size_t)P * P, sizeof *met);
        for (int r = 0; r < R; r++) {
            int idle = 0;
            for (int i = 0; i < P; i++) {
                int j = lts_tournament_partner(P, r, i);
                if (j < 0) { idle++; continue; }
                CHECK(j != i && j < P);
                CHECK(lts_tournament_partner(P, r, j) == i);   /* disjoint: a rank is in one pair */
                met[i * P + j]++;
            }
            CHECK(idle == P % 2);
        }
        for (int i = 0; i < P; i++)
            for (int j = 0; j < P; j++) if (i != j) CHECK(met[i * P + j] == 1);
        free(met);
        /* lts_all_pairs lists the same pairs, i<j, grouped so that greedy packing gives R rounds */
        int *pairs;
        size_t np;
        CHECK(lts_all_pairs(P, &pairs, &np) == LTS_OK);
        CHECK(np == (size_t)P * (P - 1) / 2);
        int *round_of = malloc(np * sizeof *round_of);
        CHECK(lts_pack_rounds(P, pairs, np, 2, round_of) == R);
        free(round_of);
        free(pairs);
    }
    /* greedy packing: overlapping triplets never share a round */
    int *tr;
    size_t nt;
    CHECK(lts_all_triplets(6, &tr, &nt) == LTS_OK && nt == 60);
    int *ro = malloc(nt * sizeof *ro);
    int R = lts_pack_rounds(6, tr, nt, 3, ro);
    CHECK(R >= 30 && R < 60);   /* 6 ranks hold at most two disjoint triplets per round */
    for (size_t a = 0; a < nt; a++)
        for (size_t b = a + 1; b < nt; b++)
            if (ro[a] == ro[b])
                for (int x = 0; x < 3; x++) for (int y = 0; y < 3; y++) CHECK(tr[3 * a + x] != tr[3 * b + y]);
    free(ro);
    free(tr);
    CHECK(lts_tournament_partner(1, 0, 0) == -1 && lts_tournament_rounds(1) == 0);
    return CHECK_DONE();
}
