# Compares two files of vectors, one vector per line as space-separated floats (line i of the
# first, the reference, against line i of the second): prints
#   "n N min_cosine C max_abs_diff D worst_line L"
# and exits 1 if the line or value counts differ. Used by test_embed_cli.sh, test_minilm_parity.sh
# and scripts/minilm-parity (docs/BERT.md).
#   awk -f embed_compare.awk ref.vec got.vec
NR == FNR { ref[FNR] = $0; nref = FNR; next }
{
  ng = FNR
  if (!(FNR in ref)) { print "extra line " FNR > "/dev/stderr"; bad = 1; next }
  n = split(ref[FNR], a, " ")
  if (NF != n) { print "line " FNR ": " NF " values, want " n > "/dev/stderr"; bad = 1; next }
  ab = 0; aa = 0; bb = 0; md = 0
  for (i = 1; i <= n; i++) {
    x = a[i] + 0; y = $i + 0
    ab += x * y; aa += x * x; bb += y * y
    d = x - y; if (d < 0) d = -d
    if (d > md) md = d
  }
  c = (aa > 0 && bb > 0) ? ab / sqrt(aa * bb) : 0
  if (FNR == 1 || c < mincos) { mincos = c; worst = FNR }
  if (md > maxd) maxd = md
}
END {
  if (ng != nref) { print "got " ng " vectors, want " nref > "/dev/stderr"; bad = 1 }
  printf "n %d min_cosine %.9f max_abs_diff %.3g worst_line %d\n", ng, mincos, maxd, worst
  exit bad
}
