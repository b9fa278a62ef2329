// SPDX-License-Identifier: Apache-2.0
// Checks a tuning candidate's output against the reference kernel's, element by element.
#pragma once

#include <string>
#include <vector>

#include "kjit/types.hpp"

namespace kjit {

/// How far two outputs of the same math, rounded to `out`, may differ: |got - ref| <=
/// absolute + relative * |ref|.
struct Tolerance {
  float relative, absolute;
};
Tolerance tolerance_for(DType out);

/// "wrong: element 12 is 0.5, the reference kernel gives 0.25".
std::string mismatch_message(std::size_t element, float got, float reference);

/// Both outputs (raw bytes of `out` elements) come from fp32 math rounded to the output type:
/// they may differ by rounding, never by more; NaN must match NaN. Returns an empty string when
/// they agree, else which element differs and how. Runs on all hardware threads, since tuning
/// checks every candidate's full output.
std::string compare_outputs(const std::vector<unsigned char>& got,
                            const std::vector<unsigned char>& reference, DType out);

/// The same for outputs whose rows of `row_elements` are weighted means of the same inputs
/// (attention: each row of O mixes rows of V by its probabilities). Rounding a probability to 16
/// bits moves every element of the row by a fraction of the values mixed, not of the element,
/// which cancellation can leave small: each element may also differ by the relative tolerance
/// times the largest |reference| of its row.
std::string compare_output_rows(const std::vector<unsigned char>& got, const std::vector<unsigned char>& reference,
                                DType out, std::size_t row_elements);

}  // namespace kjit
