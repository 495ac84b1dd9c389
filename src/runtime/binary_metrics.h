// Metrics of a binary classifier's scores (logits) against 0/1 labels, in double:
//   log loss  mean over the samples of max(z, 0) - z y + log(1 + e^-|z|) (binary cross-entropy
//             of sigmoid(z));
//   AUC       the probability that a positive scores above a negative, ties counting one half:
//             (sum of the positives' ranks - P (P + 1) / 2) / (P N), ranks 1-based in ascending
//             score, tied scores sharing their mean rank; 0.5 when either class is empty.
#pragma once

#include <vector>

namespace tessera::runtime {

double binary_log_loss(const std::vector<float>& logits, const std::vector<float>& labels);
double binary_auc(const std::vector<float>& scores, const std::vector<float>& labels);

}  // namespace tessera::runtime
