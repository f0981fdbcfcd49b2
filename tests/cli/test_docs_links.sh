#!/usr/bin/env bash
# The docs a clone stands on (issue 27): no file of the project cites a document outside it (the
# shared design notes the project started from), and every relative link of a Markdown file
# (docs/*.md, README.md, bench/README.md, ...) names a file that exists.
source "$(dirname "$0")/lib.sh"

cd "$ROOT" || { bad "cannot enter $ROOT"; finish docs_links; exit 1; }
folders=()
for d in src include cli tests docs bench scripts fuzz examples .ci; do [ -d "$d" ] && folders+=("$d"); done
top=()
for f in README.md CMakeLists.txt Makefile; do [ -f "$f" ] && top+=("$f"); done

# 1. Citations of the outside notes. The patterns are split so that this file does not match them.
outside='shared/''docs\|\.\./''shared\|DESIGN''\.md\|STYLE''\.md'
hits=$(grep -rIn "$outside" "${folders[@]}" "${top[@]}" 2> /dev/null)
[ -z "$hits" ] && ok || bad "cites a document outside the project:
$hits"

# 2. Relative Markdown links resolve (from the folder of the file that holds them).
n_links=0
while IFS= read -r md; do
  dir=$(dirname "$md")
  while IFS= read -r target; do
    case "$target" in http://* | https://* | mailto:* | '#'*) continue ;; esac
    n_links=$((n_links + 1))
    path=${target%%#*}
    [ -e "$dir/$path" ] && ok || bad "$md: link ($target) names no file"
  done < <(grep -o '\]([^) ]*)' "$md" | sed 's/^](//; s/)$//')
done < <(find "${folders[@]}" "${top[@]}" -name '*.md' -not -path '*/node_modules/*' 2> /dev/null | sort)
[ "$n_links" -gt 20 ] && ok || bad "only $n_links relative links found: is the link pattern broken?"

finish docs_links
