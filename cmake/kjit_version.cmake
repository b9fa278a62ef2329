# SPDX-License-Identifier: Apache-2.0
# kjit's version lives in the C header (KJIT_VERSION_*), the one place it is written: the
# library, the package config and the Python package (pyproject.toml) all read it from there.
file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/../runtime/include/kjit/kjit.h" kjit_version_lines
     REGEX "^#define KJIT_VERSION_[A-Z]+ ")
foreach(line IN LISTS kjit_version_lines)
  if(line MATCHES "^#define KJIT_VERSION_([A-Z]+) \"?([0-9.]+)\"?$")
    set(KJIT_HEADER_VERSION_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
  endif()
endforeach()
set(KJIT_HEADER_VERSION
    "${KJIT_HEADER_VERSION_MAJOR}.${KJIT_HEADER_VERSION_MINOR}.${KJIT_HEADER_VERSION_PATCH}")
if(NOT KJIT_HEADER_VERSION STREQUAL KJIT_HEADER_VERSION_STRING)
  message(FATAL_ERROR "kjit.h: KJIT_VERSION_STRING (${KJIT_HEADER_VERSION_STRING}) does not match "
                      "KJIT_VERSION_MAJOR/MINOR/PATCH (${KJIT_HEADER_VERSION})")
endif()
