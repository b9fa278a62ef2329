# SPDX-License-Identifier: Apache-2.0
# Script mode: turns kernel_sources/*.cuh, and the public headers they include, into one C++
# file of raw-string literals, so the library never reads its kernel sources from disk at run
# time. A kernel source is named by its file name, a public header as "kjit/<file name>".
#   cmake -DOUTPUT=<file.cpp> -DSOURCES=<a.cuh;b.cuh> -DPUBLIC_HEADERS=<c.hpp> -P embed_kernel_sources.cmake
set(body "")
set(entries "")
function(embed name source)
  file(READ "${source}" text)
  string(MAKE_C_IDENTIFIER "${name}" ident)
  string(APPEND body "static const char k_${ident}[] = R\"kjit_embed(${text})kjit_embed\";\n")
  string(APPEND entries "    {\"${name}\", {k_${ident}, sizeof(k_${ident}) - 1}},\n")
  set(body "${body}" PARENT_SCOPE)
  set(entries "${entries}" PARENT_SCOPE)
endfunction()
foreach(source IN LISTS SOURCES)
  get_filename_component(name "${source}" NAME)
  embed("${name}" "${source}")
endforeach()
foreach(source IN LISTS PUBLIC_HEADERS)
  get_filename_component(name "${source}" NAME)
  embed("kjit/${name}" "${source}")
endforeach()
file(WRITE "${OUTPUT}.tmp" "// Generated from kernel_sources/ by cmake/embed_kernel_sources.cmake; do not edit.
#include \"runtime/compiler/embedded_sources.h\"

namespace kjit {
namespace {
${body}
const EmbeddedSource k_sources[] = {
${entries}};
}  // namespace

const EmbeddedSource* embedded_sources_begin() { return k_sources; }
const EmbeddedSource* embedded_sources_end() { return k_sources + sizeof(k_sources) / sizeof(k_sources[0]); }

}  // namespace kjit
")
# Rewrite only on change so that dependents are not rebuilt for nothing.
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUTPUT}.tmp" "${OUTPUT}")
file(REMOVE "${OUTPUT}.tmp")
