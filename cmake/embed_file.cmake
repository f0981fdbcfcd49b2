# Embeds a file into a C source as a byte array, at build time (no xxd, no `ld -r -b binary`):
#   cmake -DIN=file -DOUT=file.c -DNAME=sym -P embed_file.cmake
# writes `const unsigned char sym[]` (the bytes, then a NUL) and `const size_t sym_len` (the bytes,
# without the NUL). Used for tfm serve's web page (cli/serve/page.html, docs/SERVE.md).
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR n "${hex_len} / 2")
set(bytes "")
if(hex_len GREATER 0)
  math(EXPR last "${hex_len} - 1")
  foreach(at RANGE 0 ${last} 32) # 16 bytes a line
    string(SUBSTRING "${hex}" ${at} 32 line)
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," line "${line}")
    string(APPEND bytes "${line}\n")
  endforeach()
endif()
file(WRITE "${OUT}.tmp" "/* Generated from ${IN} by cmake/embed_file.cmake: do not edit. */\n#include <stddef.h>\n"
  "const unsigned char ${NAME}[] = {\n${bytes}0x00};\nconst size_t ${NAME}_len = ${n};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
