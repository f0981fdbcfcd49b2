/* tfm bleu — corpus BLEU and chrF2 of a hypothesis file against a reference file, as sacreBLEU's
 * defaults compute them (include/tfm/bleu.h). */
#include "args.h"
#include "commands.h"

#include "tfm/bleu.h"

#include <stdio.h>

static int run_bleu(int argc, char **argv) {
    const char *hyp = NULL, *ref = NULL;
    const cli_opt opts[] = {
        {"--hyp", OPT_STR, &hyp, 1, "hypotheses: UTF-8 text, one segment per line"},
        {"--ref", OPT_STR, &ref, 1, "references: UTF-8 text, the same number of lines"},
    };
    int rc = cli_parse(&cmd_bleu, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (rc == 1) return 0;
    if (rc != 0) return EXIT_USAGE;

    tfm_bleu_stats bleu = {0};
    tfm_chrf_stats chrf = {0};
    size_t n = 0;
    /* opens both files first; UTF-8, equal counts and at least one line: tfm_bleu_check_segments,
     * the validation tfm eval shares */
    if (tfm_bleu_chrf_files(hyp, ref, &bleu, &chrf, &n) != TFM_OK) {
        cli_error("bleu", "%s", tfm_last_error());
        return EXIT_RUNTIME;
    }
    tfm_bleu_score s = tfm_bleu_compute(&bleu);
    char line[512];
    tfm_bleu_format(&s, line, sizeof line);
    printf("%s\n%s\n", line, tfm_bleu_signature());
    printf("chrF2 = %.2f\n%s\n", tfm_chrf_compute(&chrf), tfm_chrf_signature());
    return 0;
}

const cli_command cmd_bleu = {
    "bleu",
    "corpus BLEU and chrF2 of --hyp against --ref, as sacreBLEU " TFM_SACREBLEU_VERSION,
    "tfm bleu --hyp F --ref F",
    run_bleu,
};
