// Test helper: checks the gradients `memopt grad` builds against central finite differences in
// float64, running both the training graph and the forward model on the CPU executor.
//
// How the seed works: the executor's YieldOp feeds each differentiated output o an incoming
// gradient g_o (exec/output_gradients.h): 1 for a one-element output (a scalar loss), else what
// the caller gives. The test gives random g_o for the others, so a training graph run computes
//     sum over seeded outputs o of  g_o . d o / d x   =  d/dx ( sum_o <g_o, o> ),
// and the finite differences are taken of F(x) = sum_o <g_o, o(x)> over the same outputs
// (GradResult::seeded_outputs): d loss / d x for a scalar loss, a vector-Jacobian product else.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "exec/executor.h"
#include "grad/grad_builder.h"
#include "io/model_loader.h"

namespace memopt::testing {

struct GradCheck {
  std::string text;                            ///< forward model, ONNX text syntax, double tensors
  GradOptions options;                         ///< e.g. trainable = "^(x|w)$" for graph inputs
  std::map<std::string, Tensor> fixed;         ///< inputs fed as given (indices, labels, masks)
  std::map<std::string, std::pair<double, double>> ranges;  ///< per-input uniform range (default [-1, 1])
  double step = 1e-5;
  double tol = 1e-6;  ///< |g - fd| <= tol * max(1, |fd|)
  uint64_t seed = 7;
};

inline Tensor RandomDoubles(const std::vector<int64_t>& shape, std::mt19937_64& rng, std::pair<double, double> r) {
  Tensor t(DataType::kDouble, shape);
  std::uniform_real_distribution<double> dist(r.first, r.second);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<double>()[i] = dist(rng);
  return t;
}

inline Tensor Int64s(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  Tensor t(DataType::kInt64, std::move(shape));
  std::copy(values.begin(), values.end(), t.data<int64_t>());
  return t;
}

inline RunOptions InOrder(const Model& m) {
  RunOptions o;
  o.order.resize(m.graph.nodes.size());
  std::iota(o.order.begin(), o.order.end(), 0);
  return o;
}

/// sum_o <g_o, o> after running `model`, with g_o = seeds[o] (1 where absent).
inline double Objective(const Model& model, const std::map<std::string, Tensor>& feeds,
                        const std::vector<std::string>& outputs, const std::map<std::string, Tensor>& seeds) {
  auto run = Execute(model, feeds, InOrder(model));
  INFO(run.status().message());
  REQUIRE(run.ok());
  double f = 0;
  for (const std::string& name : outputs) {
    const Tensor& t = run->outputs.at(name);
    auto seed = seeds.find(name);
    for (int64_t i = 0; i < t.numel(); ++i) {
      f += (seed == seeds.end() ? 1.0 : seed->second.GetAsDouble(i)) * t.GetAsDouble(i);
    }
  }
  return f;
}

/// Builds the gradient graph, runs it, and compares every gradient output with finite
/// differences. Returns the result for further checks on the graph.
inline GradResult RunGradCheck(const GradCheck& c) {
  auto model = LoadModelFromText(c.text);
  INFO(model.status().message());
  REQUIRE(model.ok());
  std::mt19937_64 rng(c.seed);
  std::map<std::string, Tensor> feeds = c.fixed;
  auto range_of = [&](const std::string& name) {
    auto it = c.ranges.find(name);
    return it == c.ranges.end() ? std::make_pair(-1.0, 1.0) : it->second;
  };
  const Graph& g = model->graph;
  for (ValueId v : g.inputs) {
    const Value& value = g.value(v);
    if (feeds.count(value.name) || value.initializer) continue;
    REQUIRE(value.info.dtype == DataType::kDouble);
    REQUIRE(value.info.shape.has_value());
    std::vector<int64_t> dims;
    for (const SymExpr& d : *value.info.shape) {
      REQUIRE(d.AsInt().has_value());
      dims.push_back(*d.AsInt());
    }
    feeds[value.name] = RandomDoubles(dims, rng, range_of(value.name));
  }
  for (const Value& value : g.values) {
    if (!value.initializer || value.initializer->dtype != DataType::kDouble || feeds.count(value.name)) continue;
    feeds[value.name] = RandomDoubles(value.initializer->dims, rng, range_of(value.name));
  }

  auto result = BuildGradientGraph(*model, c.options);
  INFO(result.status().message());
  REQUIRE(result.ok());
  // Incoming gradients: random for outputs with more than one element; scalars keep the 1 the
  // executor feeds a loss.
  auto forward = Execute(*model, feeds, InOrder(*model));
  INFO(forward.status().message());
  REQUIRE(forward.ok());
  std::map<std::string, Tensor> seeds;
  RunOptions train = InOrder(result->model);
  const std::map<std::string, std::string> gradient_names = YieldGradientNames(result->model.graph);
  for (const std::string& o : result->seeded_outputs) {
    const Tensor& value = forward->outputs.at(o);
    if (value.numel() == 1) continue;
    seeds[o] = RandomDoubles(value.shape(), rng, {-1.0, 1.0});
    REQUIRE(gradient_names.count(o + "_grad") == 1);
    train.output_grads.given[gradient_names.at(o + "_grad")] = seeds[o];
  }
  auto run = Execute(result->model, feeds, train);
  INFO(run.status().message());
  REQUIRE(run.ok());
  REQUIRE_FALSE(result->gradients.empty());

  for (const std::string& x : result->gradients) {
    const Tensor& grad = run->outputs.at(x + "_grad");
    Tensor& param = feeds.at(x);
    REQUIRE(grad.shape() == param.shape());
    for (int64_t i = 0; i < param.numel(); ++i) {
      double* p = param.data<double>() + i;
      const double keep = *p;
      *p = keep + c.step;
      const double up = Objective(*model, feeds, result->seeded_outputs, seeds);
      *p = keep - c.step;
      const double down = Objective(*model, feeds, result->seeded_outputs, seeds);
      *p = keep;
      const double fd = (up - down) / (2 * c.step);
      const double got = grad.GetAsDouble(i);
      INFO("d/d " << x << "[" << i << "]: built " << got << ", finite differences " << fd);
      CHECK(std::abs(got - fd) <= c.tol * std::max(1.0, std::abs(fd)));
    }
  }
  return std::move(result).value();
}

/// Number of nodes of `op` in the training graph.
inline int CountOps(const GradResult& r, const std::string& op) {
  int n = 0;
  for (const Node& node : r.model.graph.nodes) n += node.op_type == op;
  return n;
}

}  // namespace memopt::testing
