/* cost_model.h — the tuner's cost model (engine/cost_model.c): gradient
 * boosted regression trees (squared loss, depth 3, L2-regularised leaves,
 * as XGBoost's exact greedy algorithm) fitted online to the candidates
 * measured so far, predicting a candidate's log throughput from its
 * features (sched_features), so that `:tune` measures only the candidates
 * it ranks best. */
#ifndef RLY_ENGINE_COST_MODEL_H
#define RLY_ENGINE_COST_MODEL_H

#include <stdbool.h>

typedef struct CostModel CostModel;

/* A model of samples with nfeat features each (malloc'd). */
CostModel *cost_model_new(int nfeat);
void cost_model_free(CostModel *m);
/* One more training sample: features x (copied), target y. */
void cost_model_add(CostModel *m, const float *x, double y);
int cost_model_samples(const CostModel *m);
/* Fits the trees to all samples so far (again from scratch: deterministic). */
void cost_model_fit(CostModel *m);
/* The prediction for x (the samples' mean before any fit). */
double cost_model_predict(const CostModel *m, const float *x);

#endif
