#!/usr/bin/env bash
# The layering of docs/ARCHITECTURE.md, checked on the include folders the build really gives each
# layer's target: every internal header of a layer the layer may use must be found, every other
# layer's internal header must not be. The allowed table below is written from docs/ARCHITECTURE.md,
# apart from CMakeLists.txt, so widening a layer's include folders there fails this test.
#
#   check_layering.sh CC SRC_DIR LAYER DIRS [LAYER DIRS]...    (DIRS: include folders joined by ':')
source "$(dirname "$0")/../cli/lib.sh"
CC=$1 SRC=$2
shift 2
declare -A FLAGS # each layer's -I flags, for the owners' check below
declare -A USES=([core]="core" [ops]="ops core" [model]="model ops core" [train]="train model ops core text"
                 [infer]="infer model ops core text" [text]="text core")
[ $# -ge 2 ] || bad "no layers given"
while [ $# -ge 2 ]; do
  layer=$1 dirs=$2
  shift 2
  [ -n "${USES[$layer]:-}" ] || { bad "$layer: not a layer of docs/ARCHITECTURE.md"; continue; }
  flags=()
  IFS=: read -r -a ds <<< "$dirs"
  for d in "${ds[@]}"; do flags+=(-I "$d"); done
  FLAGS[$layer]="${flags[*]}"
  for other in "${!USES[@]}"; do
    allowed=0
    for u in ${USES[$layer]}; do [ "$u" = "$other" ] && allowed=1; done
    for h in "$SRC"/src/"$other"/*.h; do
      [ -e "$h" ] || continue
      name=$(basename "$h")
      err=$(printf '#include "%s"\n' "$name" | "$CC" -E "${flags[@]}" -x c - 2>&1 >/dev/null)
      found=$?
      if [ "$allowed" = 1 ]; then
        [ "$found" -eq 0 ] && ok || bad "$layer may use $other, but cannot include $name: ${err:0:300}"
      else
        case "$err" in
          *"$name: No such file"*) ok ;;
          *) bad "$layer must not see $other's $name, but it can (or another error: ${err:0:300})" ;;
        esac
      fi
    done
  done
done
# One owner of each file format inside a layer: OWNED[header]=layer. The source files of every other
# layer are preprocessed with its own include folders (-MM: one rule per file, the project headers it
# reads, directly or through another header), and none may read the owned header (train/ reaches
# checkpoints through model/'s checkpoint.h, never the safetensors format itself; model_internal.h,
# the whole model layer at once, is for model/ itself: the others include the headers of the
# concerns they use, docs/ARCHITECTURE.md's table).
declare -A OWNED=([safetensors.h]="model" [model_internal.h]="model")
for layer in "${!FLAGS[@]}"; do
  read -r -a flags <<< "${FLAGS[$layer]}"
  srcs=("$SRC"/src/"$layer"/*.c)
  [ -e "${srcs[0]}" ] || continue
  if ! deps=$("$CC" -MM "${flags[@]}" -I "$SRC/include" "${srcs[@]}" 2>&1); then
    bad "$layer: cannot list the headers of its sources: ${deps:0:300}"; continue
  fi
  deps=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' <<< "$deps") # one line per source file
  for h in "${!OWNED[@]}"; do
    [ "${OWNED[$h]}" = "$layer" ] && continue
    readers=$(grep -E "[/ ]$h( |\$)" <<< "$deps" | cut -d: -f1 | sed 's/\.o$/.c/')
    [ -z "$readers" ] && ok
    for f in $readers; do bad "$layer/$f includes $h, which only ${OWNED[$h]}/ may"; done
  done
done

# Outside src/model/ the model and context are read through accessors (model_params.h,
# model_context.h, kv_cache.h): no other layer names a field only struct tfm_model or struct
# tfm_context has (the others, m/cfg/kernels/pe, are common names of other structs).
reach=$(grep -rnE '(->|\.)(acts|cache|param_arena|entries|n_entries|n_params|act_arena|decode_compact|tokenizer_len)\b' \
  "$SRC/src" --include='*.c' --include='*.h' | grep -v "^$SRC/src/model/" || true)
[ -z "$reach" ] && ok || bad "fields of struct tfm_model / tfm_context read outside src/model/ (use model/'s accessors): $reach"

# A quoted include is looked up in the including file's own folder first, so a path that climbs out
# of it ("../model/x.h") would bypass the include folders above: none may exist under src/.
climbers=$(grep -rnE '#[[:space:]]*include[[:space:]]*"[^"]*\.\./' "$SRC/src" || true)
[ -z "$climbers" ] && ok || bad "includes that climb out of their folder (bypassing the layering): $climbers"
finish layering
