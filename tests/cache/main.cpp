// SPDX-License-Identifier: Apache-2.0
// The one doctest main shared by every cache test file.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
