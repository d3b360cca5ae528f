#include "plan/remat_reference.h"

#include <glpk.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "analysis/peak_estimate.h"
#include "plan/cost_model.h"
#include "rewrite/recompute_rewrite.h"
#include "rewrite/rewrite_spec.h"

namespace memopt {
namespace {

struct GlpkDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

bool NeverTwice(const Node& node) {
  // Dropout runs again with the seed the rewrite gives it: the same mask (RecomputesIdentically).
  return node.op_type == "YieldOp" || !RecomputesIdentically(node);
}

/// The program: columns, rows as (column, coefficient) lists with an upper bound.
class Program {
 public:
  int AddColumn(int kind, double lower, double upper, double objective, std::string name) {
    columns_.push_back({kind, lower, upper, objective, std::move(name)});
    return static_cast<int>(columns_.size());  // GLPK counts from 1
  }
  void AddRow(std::vector<std::pair<int, double>> terms, double upper) { rows_.push_back({std::move(terms), upper}); }
  const std::vector<std::pair<std::vector<std::pair<int, double>>, double>>& rows() const { return rows_; }
  const std::string& NameOf(int col) const { return columns_[static_cast<size_t>(col - 1)].name; }

  std::unique_ptr<glp_prob, GlpkDeleter> Load() const {
    std::unique_ptr<glp_prob, GlpkDeleter> lp(glp_create_prob());
    glp_set_obj_dir(lp.get(), GLP_MIN);
    glp_add_cols(lp.get(), static_cast<int>(columns_.size()));
    for (size_t j = 0; j < columns_.size(); ++j) {
      const Column& c = columns_[j];
      const int col = static_cast<int>(j + 1);
      glp_set_col_name(lp.get(), col, c.name.c_str());
      glp_set_col_kind(lp.get(), col, c.kind);
      glp_set_col_bnds(lp.get(), col, c.lower == c.upper ? GLP_FX : GLP_DB, c.lower, c.upper);
      glp_set_obj_coef(lp.get(), col, c.objective);
    }
    std::vector<int> ia{0}, ja{0};
    std::vector<double> ar{0.0};
    glp_add_rows(lp.get(), static_cast<int>(rows_.size()));
    for (size_t i = 0; i < rows_.size(); ++i) {
      const int row = static_cast<int>(i + 1);
      glp_set_row_bnds(lp.get(), row, GLP_UP, 0.0, rows_[i].second);
      std::map<int, double> merged;  // a column may appear twice in a row
      for (const auto& [col, coef] : rows_[i].first) merged[col] += coef;
      for (const auto& [col, coef] : merged) {
        ia.push_back(row);
        ja.push_back(col);
        ar.push_back(coef);
      }
    }
    glp_load_matrix(lp.get(), static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
    return lp;
  }

  /// Solves; fills `x` (by column, from 1) and returns the GLPK status (GLP_OPT, GLP_FEAS, ...).
  /// `start` (by column, from 1), when not empty, is a feasible solution the search starts from.
  int Solve(double time_limit_seconds, const std::vector<double>& start, std::vector<double>& x, double& gap) const {
    glp_term_out(GLP_OFF);  // the library never prints
    std::unique_ptr<glp_prob, GlpkDeleter> lp = Load();
    x.assign(columns_.size() + 1, 0.0);
    gap = 0;
    const auto started = std::chrono::steady_clock::now();
    glp_scale_prob(lp.get(), GLP_SF_AUTO);  // byte counts next to 0/1 columns
    glp_smcp lp_parm;
    glp_init_smcp(&lp_parm);
    lp_parm.msg_lev = GLP_MSG_OFF;
    lp_parm.tm_lim = static_cast<int>(std::max(0.05, time_limit_seconds) * 1000);
    const int simplex = glp_simplex(lp.get(), &lp_parm);
    if (simplex == 0 && glp_get_status(lp.get()) == GLP_NOFEAS) return GLP_NOFEAS;
    if (simplex != 0 || glp_get_status(lp.get()) != GLP_OPT) {
      if (start.empty()) return GLP_UNDEF;
      x = start;  // the relaxation did not solve (time, numerics): the start stands, unproved
      gap = 1.0;
      return GLP_FEAS;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    struct Callback {
      const std::vector<double>* start = nullptr;
      bool given = false;
      double gap = 0;
    } callback{start.empty() ? nullptr : &start};
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_OFF;  // the LP relaxation is solved above
    parm.tm_lim = static_cast<int>(std::max(0.05, time_limit_seconds - elapsed) * 1000);
    parm.mir_cuts = GLP_ON;
    parm.gmi_cuts = GLP_ON;
    parm.cb_info = &callback;
    parm.cb_func = [](glp_tree* tree, void* info) {
      auto* cb = static_cast<Callback*>(info);
      if (glp_ios_reason(tree) == GLP_IHEUR && cb->start != nullptr && !cb->given) {
        cb->given = true;
        glp_ios_heur_sol(tree, cb->start->data());
      }
      if (glp_ios_reason(tree) == GLP_ISELECT) cb->gap = glp_ios_mip_gap(tree);
    };
    glp_intopt(lp.get(), &parm);
    const int status = glp_mip_status(lp.get());
    if (status == GLP_OPT || status == GLP_FEAS) {
      for (size_t j = 1; j <= columns_.size(); ++j) x[j] = glp_mip_col_val(lp.get(), static_cast<int>(j));
    } else if (!start.empty()) {
      x = start;
      gap = 1.0;
      return GLP_FEAS;
    }
    gap = status == GLP_OPT ? 0.0 : std::min(callback.gap, 1.0);  // 1: no bound proved yet
    return status;
  }
  size_t num_columns() const { return columns_.size(); }

 private:
  struct Column {
    int kind;
    double lower, upper, objective;
    std::string name;
  };
  std::vector<Column> columns_;
  std::vector<std::pair<std::vector<std::pair<int, double>>, double>> rows_;

 public:
  void Rename(int col, std::string name) { columns_[static_cast<size_t>(col - 1)].name = std::move(name); }
};

/// Per node: with a YieldOp boundary, whether it depends on the boundary (ONNX Runtime's main
/// path); all 0 elsewhere.
std::vector<char> AfterBoundary(const Graph& graph, const ScanResult& scan) {
  std::vector<char> after_boundary(graph.nodes.size(), 0);
  if (!IsYieldStyle(graph, scan.boundary)) return after_boundary;
  std::vector<NodeId> stack = {scan.boundary.node};
  after_boundary[scan.boundary.node] = 1;
  while (!stack.empty()) {
    const NodeId n = stack.back();
    stack.pop_back();
    for (ValueId o : graph.node(n).outputs) {
      if (o == kNone) continue;
      for (const auto& [consumer, slot] : graph.value(o).consumers) {
        if (!after_boundary[consumer]) {
          after_boundary[consumer] = 1;
          stack.push_back(consumer);
        }
      }
    }
  }
  return after_boundary;
}

/// Per step: the stage whose recomputations run right before it. In ONNX Runtime's backward order
/// the backward steps that do not depend on the boundary (constants, shape computations, batch
/// statistics of stashed values) run in batches right before the main-path step that needs them,
/// sorted by a Kahn pass. A clone of a forward step is such a step too: it runs in the batch of
/// the first main-path step that needs it, among the batch's steps near its start, not before a
/// step of the caller's choosing. So recomputations before a step inside a batch, or before the
/// main-path step that ends one, count at the batch's first step. Elsewhere every step is its own
/// stage.
std::vector<int32_t> RecomputeStages(const ScanResult& scan, const std::vector<char>& after_boundary) {
  const ExecutionOrder& order = scan.order;
  const int32_t n = static_cast<int32_t>(order.order.size());
  std::vector<int32_t> stage(static_cast<size_t>(n));
  bool yield_style = false;
  for (char a : after_boundary) yield_style = yield_style || a;
  auto in_batch = [&](int32_t t) { return t > order.last_forward && !after_boundary[order.order[t]]; };
  for (int32_t t = 0; t < n; ++t) stage[t] = yield_style && t > 0 && in_batch(t - 1) ? stage[t - 1] : t;
  return stage;
}

class Builder {
 public:
  Builder(const Graph& graph, const ScanResult& scan, const DimBindings& dims, const RematReferenceOptions& options)
      : graph_(graph), order_(scan.order), options_(options), live_(ComputeValueLiveRanges(graph, scan.order, dims)) {
    n_ = static_cast<int32_t>(order_.order.size());
    step_bytes_.assign(static_cast<size_t>(n_), 0);
    step_cost_.assign(static_cast<size_t>(n_), 0.0);
    recomputable_.assign(static_cast<size_t>(n_), 0);
    reads_.resize(static_cast<size_t>(n_));
    for (ValueId v = 0; v < static_cast<ValueId>(graph.values.size()); ++v) {
      if (!live_.bytes[v].has_value()) continue;
      if (live_.alloc[v] == ValueLiveRanges::kAlways) {
        always_bytes_ += live_.size[v];
      } else if (live_.alloc[v] >= 0) {
        values_.push_back(v);
        step_bytes_[live_.alloc[v]] += live_.size[v];
      }
    }
    std::set<ValueId> tracked(values_.begin(), values_.end());
    // With a YieldOp boundary the backward order is ONNX Runtime's (MEMORY_EFFICIENT): a clone
    // that reads what the boundary produces runs as soon as its inputs are ready, not where it is
    // placed; only clones of steps that do not depend on the boundary (forward steps, backward
    // constants and shape computations) run where placed (right before their reader). Elsewhere
    // the written node order is the execution order and any step can run again anywhere.
    const std::vector<char> after_boundary = AfterBoundary(graph, scan);
    stage_of_ = RecomputeStages(scan, after_boundary);
    for (int32_t t = 0; t < n_; ++t) {
      const Node& node = graph.node(order_.order[t]);
      bool outputs = false;
      for (ValueId o : node.outputs) outputs = outputs || (o != kNone && tracked.count(o));
      recomputable_[t] = options.allow_recompute && outputs && !NeverTwice(node) && !after_boundary[node.id];
      step_cost_[t] = EstimateNodeCost(graph, node, dims).seconds;
      for (ValueId in : node.inputs) {
        if (in != kNone && tracked.count(in) &&
            std::find(reads_[t].begin(), reads_[t].end(), in) == reads_[t].end()) {
          reads_[t].push_back(in);
        }
      }
    }
    for (ValueId v : values_) {
      std::set<int32_t> users;
      for (const auto& [consumer, slot] : graph.value(v).consumers) {
        const int32_t pos = order_.position[consumer];
        if (pos > live_.alloc[v]) users.insert(pos);
      }
      users_[v].assign(users.begin(), users.end());
    }
  }

  /// Builds the program; checks the fixed and start schedules.
  Status Build() {
    for (const auto* schedule : {&options_.fixed, &options_.start}) {
      if (schedule->has_value()) MEMOPT_RETURN_IF_ERROR(CheckSchedule(**schedule));
    }
    const bool minimise_peak = !options_.budget.has_value();
    double total_cost = 0;
    for (int32_t i = 0; i < n_; ++i) total_cost += recomputable_[i] ? step_cost_[i] : 0.0;
    const double cost_scale = total_cost > 0 ? 1.0 / (total_cost * n_) : 0.0;
    cost_scale_ = cost_scale;
    // Peak in units of the no-recompute peak's order of magnitude; cost a tie-breaker below it.
    scale_bytes_ = always_bytes_;
    for (int64_t b : step_bytes_) scale_bytes_ += b;
    scale_bytes_ = std::max<int64_t>(scale_bytes_, 1);
    // Memory rows count units of unit_ bytes: 1 byte up to ~1e9 bytes in all (exact to the byte
    // there); beyond, the solver's tolerances could not tell bytes apart anyway.
    unit_ = std::max(1.0, static_cast<double>(scale_bytes_) / 1e9);
    peak_col_ = minimise_peak ? program_.AddColumn(GLP_CV, 0.0, 4.0 * static_cast<double>(scale_bytes_) / unit_,
                                                   unit_ / static_cast<double>(scale_bytes_), "peak")
                              : 0;
    const double cost_weight = minimise_peak ? 1e-3 : 1.0;
    for (int32_t t = 0; t < n_; ++t) {
      if (stage_of_[t] != t) continue;  // inside a batch: its recomputations count at the batch's start
      for (int32_t i = 0; i < t; ++i) {
        if (recomputable_[i]) {
          r_[{t, i}] = program_.AddColumn(GLP_BV, 0, 1, cost_weight * step_cost_[i] * cost_scale,
                                          "R_" + std::to_string(t) + "_" + std::to_string(i));
        }
      }
    }
    for (ValueId v : values_) {
      const bool output = graph_.value(v).is_graph_output;
      for (int32_t t = live_.alloc[v] + 1; t <= n_; ++t) {
        const bool fixed = output && t == n_;
        s_[{t, v}] = program_.AddColumn(GLP_BV, fixed ? 1 : 0, 1, 0.0,
                                        "S_" + std::to_string(t) + "_" + std::to_string(v));
      }
    }
    AddDependencies();
    AddPersistence();
    AddFreesAndMemory();
    return Status::Ok();
  }

  Expected<RematReferenceResult> Run() {
    MEMOPT_RETURN_IF_ERROR(Build());
    std::vector<double> x;
    RematReferenceResult result;
    int status;
    if (options_.fixed.has_value()) {
      x = Simulate(*options_.fixed);
      const bool met = !options_.budget.has_value() || PeakOf(x) <= *options_.budget;
      status = met ? GLP_OPT : GLP_NOFEAS;
    } else {
      status = program_.Solve(options_.time_limit_seconds, Start(), x, result.gap);
    }
    if (status != GLP_OPT && status != GLP_FEAS) return result;  // infeasible, or nothing found in time
    result.feasible = true;
    result.optimal = status == GLP_OPT;
    result.peak_bytes = PeakOf(x);
    result.stage_peaks = StagePeaks(x);
    result.resident.resize(static_cast<size_t>(n_));
    for (const auto& [key, col] : s_) {
      if (key.first < n_ && x[col] > 0.5) result.resident[static_cast<size_t>(key.first)].push_back(key.second);
    }
    result.recomputed.resize(static_cast<size_t>(n_));
    for (const auto& [key, col] : r_) {
      if (x[col] < 0.5) continue;
      result.recomputed[key.first].push_back(key.second);
      result.added_seconds += step_cost_[key.second];
      ++result.recomputations;
    }
    for (auto& list : result.recomputed) std::sort(list.begin(), list.end());
    return result;
  }

  Expected<RematReferenceProgramInfo> Write(const std::string& mps_path, const std::string& start_path) {
    MEMOPT_RETURN_IF_ERROR(Build());
    RematReferenceProgramInfo info;
    info.objective_scale = options_.budget.has_value() ? cost_scale_ : 1.0 / static_cast<double>(scale_bytes_);
    info.stages = n_;
    info.columns = static_cast<int>(program_.num_columns());
    info.rows = static_cast<int>(program_.rows().size());
    glp_term_out(GLP_OFF);
    if (glp_write_mps(program_.Load().get(), GLP_MPS_FILE, nullptr, mps_path.c_str()) != 0) {
      return InvalidInput("cannot write the program to " + mps_path);
    }
    if (!start_path.empty() && options_.start.has_value()) {
      const std::vector<double> x = Start();
      if (!x.empty()) {
        std::ofstream out(start_path);
        out.precision(17);
        for (size_t col = 1; col < x.size(); ++col) out << program_.NameOf(static_cast<int>(col)) << ' ' << x[col] << '\n';
        if (!out) return InvalidInput("cannot write the start to " + start_path);
        info.start_written = true;
      }
    }
    return info;
  }

 private:
  Status CheckSchedule(const std::vector<std::vector<int32_t>>& schedule) const {
    if (schedule.size() > static_cast<size_t>(n_)) {
      return InvalidInput("the schedule has " + std::to_string(schedule.size()) + " stages, the graph " +
                          std::to_string(n_) + " steps");
    }
    for (size_t t = 0; t < schedule.size(); ++t) {
      if (!schedule[t].empty() && stage_of_[t] != static_cast<int32_t>(t)) {
        return InvalidInput("stage " + std::to_string(t) + " (node '" + graph_.node(order_.order[t]).name +
                            "') recomputes steps, but it runs inside a batch of backward steps that ONNX Runtime "
                            "orders itself (hint: put them at the batch's first step, stage " +
                            std::to_string(stage_of_[t]) + ")");
      }
      for (int32_t i : schedule[t]) {
        if (i < 0 || i >= static_cast<int32_t>(t) || !recomputable_[static_cast<size_t>(i)]) {
          const std::string stage = graph_.node(order_.order[t]).name;
          return InvalidInput("stage " + std::to_string(t) + " (node '" + stage + "') recomputes step " +
                              std::to_string(i) + ", which is not an earlier step that may run again (hint: only earlier steps with tracked "
                              "outputs that are not random run again)");
        }
      }
    }
    return Status::Ok();
  }

  /// The columns of `schedule` run with its best residency: a value is kept into a stage only when
  /// its next event is a read there (not a run of its producer), and freed in a stage right after
  /// the last run that produces or reads it when the next stage does not keep it. Keeping more
  /// only adds bytes and frees nothing, so this is the schedule's lowest peak.
  std::vector<double> Simulate(const std::vector<std::vector<int32_t>>& schedule) const {
    std::vector<double> x(program_.num_columns() + 1, 0.0);
    std::vector<std::vector<char>> runs(static_cast<size_t>(n_), std::vector<char>(static_cast<size_t>(n_), 0));
    for (int32_t t = 0; t < n_; ++t) {
      runs[t][t] = 1;
      if (static_cast<size_t>(t) < schedule.size()) {
        for (int32_t i : schedule[t]) {
          runs[t][i] = 1;
          x[r_.at({t, i})] = 1.0;
        }
      }
    }
    for (ValueId v : values_) {
      const int32_t a = live_.alloc[v];
      const auto& users = users_.at(v);
      // Backwards over the stages: `need` = the next event from stage t on is a read.
      bool need = graph_.value(v).is_graph_output;
      for (int32_t t = n_; t > a; --t) {
        if (t < n_) {
          bool read = false;
          for (int32_t u : users) read = read || (u <= t && runs[t][u]);
          if (runs[t][a]) need = false;
          else if (read) need = true;
        }
        x[s_.at({t, v})] = need ? 1.0 : 0.0;
      }
      // Frees: in each stage where v is present and the next stage does not keep it.
      for (int32_t t = a; t < n_; ++t) {
        const bool next_keeps = t + 1 <= n_ && x[s_.at({t + 1, v})] > 0.5;
        if (next_keeps) continue;
        int32_t last = runs[t][a] ? a : -1;
        bool read_by_t = false;
        for (int32_t u : users) {
          if (u == t) read_by_t = true;
          if (u < t && runs[t][u]) last = std::max(last, u);
        }
        if (read_by_t || last < 0 || last == t) continue;
        if (auto it = f_.find({t, v, last}); it != f_.end()) x[it->second] = 1.0;
      }
    }
    if (peak_col_ != 0) x[peak_col_] = static_cast<double>(PeakOf(x)) / unit_;
    return x;
  }

  /// The search's start: options.start with its best residency when that is feasible, else the
  /// original schedule (when feasible); empty when neither is.
  std::vector<double> Start() const {
    if (options_.start.has_value()) {
      std::vector<double> x = Simulate(*options_.start);
      if (!options_.budget.has_value() || PeakOf(x) <= *options_.budget) return x;
    }
    return OriginalSchedule();
  }

  /// exec(t, i): 1 for i == t, R[t][i] when step i may be recomputed, else 0 (no column).
  std::optional<int> Exec(int32_t t, int32_t i) const {
    auto it = r_.find({t, i});
    return it == r_.end() ? std::nullopt : std::optional<int>(it->second);
  }
  bool Runs(int32_t t, int32_t i) const { return i == t || r_.count({t, i}); }

  void AddDependencies() {
    for (int32_t t = 0; t < n_; ++t) {
      for (int32_t j = 0; j <= t; ++j) {
        if (!Runs(t, j)) continue;
        for (ValueId v : reads_[j]) {
          const int32_t a = live_.alloc[v];
          std::vector<std::pair<int, double>> row;
          double upper = 0;
          if (j == t) upper = -1;
          else row.push_back({*Exec(t, j), 1.0});
          if (auto r = Exec(t, a)) row.push_back({*r, -1.0});
          row.push_back({s_.at({t, v}), -1.0});
          program_.AddRow(std::move(row), upper);
        }
      }
    }
  }

  void AddPersistence() {
    for (ValueId v : values_) {
      const int32_t a = live_.alloc[v];
      for (int32_t t = a + 1; t < n_; ++t) {  // S[t+1] <= S[t] + exec(t, a)
        std::vector<std::pair<int, double>> row = {{s_.at({t + 1, v}), 1.0}, {s_.at({t, v}), -1.0}};
        if (auto r = Exec(t, a)) row.push_back({*r, -1.0});
        program_.AddRow(std::move(row), 0.0);
      }
    }
  }

  void AddFreesAndMemory() {
    for (int32_t t = 0; t < n_; ++t) {
      // Frees of stage t: after its producer or a reader, when no later step of the stage reads it
      // and the next stage does not keep it.
      std::map<int32_t, std::vector<std::pair<int, double>>> freed_after;  // step -> (F column, -bytes)
      for (ValueId v : values_) {
        const int32_t a = live_.alloc[v];
        if (a > t) continue;
        std::vector<int32_t> points = {a};
        for (int32_t u : users_[v]) {
          if (u <= t) points.push_back(u);
        }
        std::vector<int> at_most_once;
        for (int32_t k : points) {
          if (!Runs(t, k) || k == t) continue;  // a free after step t itself changes no check of stage t
          bool read_later_by_t = false;
          for (int32_t u : users_[v]) read_later_by_t = read_later_by_t || u == t;
          if (read_later_by_t) continue;
          const int f = program_.AddColumn(GLP_BV, 0, 1, 0.0, "F_" + std::to_string(++frees_));
          f_[{t, v, k}] = f;
          if (auto r = Exec(t, k)) program_.AddRow({{f, 1.0}, {*r, -1.0}}, 0.0);
          program_.AddRow({{f, 1.0}, {s_.at({t + 1, v}), 1.0}}, 1.0);
          for (int32_t u : users_[v]) {
            if (u > k && u < t) {
              if (auto r = Exec(t, u)) program_.AddRow({{f, 1.0}, {*r, 1.0}}, 1.0);
            }
          }
          at_most_once.push_back(f);
          freed_after[k].push_back({f, -static_cast<double>(live_.size[v]) / unit_});
        }
        if (at_most_once.size() > 1) {
          std::vector<std::pair<int, double>> row;
          for (int f : at_most_once) row.push_back({f, 1.0});
          program_.AddRow(std::move(row), 1.0);
        }
      }
      // The check after each step k of stage t.
      std::vector<std::pair<int, double>> base;
      for (ValueId v : values_) {
        if (live_.alloc[v] < t) base.push_back({s_.at({t, v}), static_cast<double>(live_.size[v]) / unit_});
      }
      std::vector<std::pair<int, double>> produced;
      double constant = static_cast<double>(always_bytes_) / unit_;
      for (int32_t k = 0; k <= t; ++k) {
        if (!Runs(t, k)) continue;
        if (k == t) constant += static_cast<double>(step_bytes_[t]) / unit_;
        else produced.push_back({*Exec(t, k), static_cast<double>(step_bytes_[k]) / unit_});
        std::vector<std::pair<int, double>> row = base;
        row.insert(row.end(), produced.begin(), produced.end());
        for (const auto& [step, frees] : freed_after) {
          if (step < k) row.insert(row.end(), frees.begin(), frees.end());
        }
        double upper;
        if (peak_col_ != 0) {
          row.push_back({peak_col_, -1.0});
          upper = -constant;
        } else {
          upper = static_cast<double>(*options_.budget) / unit_ - constant;
        }
        checks_.push_back({static_cast<int>(program_.rows().size()), constant});
        check_stage_.push_back(t);
        program_.AddRow(std::move(row), upper);
      }
    }
  }

  /// The schedule that runs every step once, as a start for the search (a feasible solution when
  /// no budget is set, or when the budget is at least its peak): each value resident from its step
  /// to its last reader (graph outputs to the end), no recomputation, no frees inside a stage.
  std::vector<double> OriginalSchedule() const {
    std::vector<double> x(program_.num_columns() + 1, 0.0);
    for (ValueId v : values_) {
      int32_t last = users_.at(v).empty() ? live_.alloc[v] : users_.at(v).back();
      if (graph_.value(v).is_graph_output) last = n_;
      for (int32_t t = live_.alloc[v] + 1; t <= last; ++t) x[s_.at({t, v})] = 1.0;
    }
    const int64_t peak = PeakOf(x);
    if (peak_col_ != 0) {
      x[peak_col_] = static_cast<double>(peak) / unit_;
    } else if (peak > *options_.budget) {
      return {};
    }
    return x;
  }

  /// The largest check of the solution, in bytes.
  int64_t PeakOf(const std::vector<double>& x) const {
    int64_t peak = always_bytes_;
    for (int64_t stage : StagePeaks(x)) peak = std::max(peak, stage);
    return peak;
  }

  /// Per stage, its largest check in bytes.
  std::vector<int64_t> StagePeaks(const std::vector<double>& x) const {
    std::vector<double> peaks(static_cast<size_t>(n_), static_cast<double>(always_bytes_) / unit_);
    for (size_t c = 0; c < checks_.size(); ++c) {
      double live = checks_[c].second;
      for (const auto& [col, coef] : program_.rows()[checks_[c].first].first) {
        if (col != peak_col_) live += coef * (x[col] > 0.5 ? 1.0 : 0.0);
      }
      double& stage = peaks[static_cast<size_t>(check_stage_[c])];
      stage = std::max(stage, live);
    }
    std::vector<int64_t> bytes;
    for (double p : peaks) bytes.push_back(static_cast<int64_t>(p * unit_ + 0.5));
    return bytes;
  }

  const Graph& graph_;
  const ExecutionOrder& order_;
  const RematReferenceOptions& options_;
  ValueLiveRanges live_;
  int32_t n_ = 0;
  int64_t always_bytes_ = 0;
  std::vector<ValueId> values_;
  std::vector<int64_t> step_bytes_;
  std::vector<double> step_cost_;
  std::vector<char> recomputable_;
  std::vector<int32_t> stage_of_;  ///< per step: the stage its recomputations count at
  std::vector<std::vector<ValueId>> reads_;
  std::map<ValueId, std::vector<int32_t>> users_;
  Program program_;
  int peak_col_ = 0;
  int frees_ = 0;
  std::map<std::tuple<int32_t, ValueId, int32_t>, int> f_;  ///< (stage, value, step) -> free column
  int64_t scale_bytes_ = 1;
  double cost_scale_ = 0;
  double unit_ = 1.0;  ///< bytes per unit of the memory rows
  std::map<std::pair<int32_t, int32_t>, int> r_;  ///< (stage, step) -> column
  std::map<std::pair<int32_t, ValueId>, int> s_;  ///< (stage, value) -> column
  std::vector<std::pair<int, double>> checks_;    ///< memory rows: (row index, constant bytes)
  std::vector<int32_t> check_stage_;              ///< per check, its stage
};

}  // namespace

Expected<RematReferenceResult> SolveRematReference(const Graph& graph, const ScanResult& scan,
                                                   const DimBindings& dims, const RematReferenceOptions& options) {
  if (scan.order.order.empty()) return InvalidInput("the graph has no steps to schedule");
  return Builder(graph, scan, dims, options).Run();
}

Expected<RematReferenceProgramInfo> WriteRematReferenceProgram(const Graph& graph, const ScanResult& scan,
                                                               const DimBindings& dims,
                                                               const RematReferenceOptions& options,
                                                               const std::string& mps_path,
                                                               const std::string& start_path) {
  if (scan.order.order.empty()) return InvalidInput("the graph has no steps to schedule");
  return Builder(graph, scan, dims, options).Write(mps_path, start_path);
}

Expected<std::vector<std::vector<int32_t>>> RematStagesOfRewrite(const Graph& graph, const ScanResult& scan,
                                                                 const ExecutionOrder& rewritten_order,
                                                                 const std::vector<NodeId>& new_id,
                                                                 const std::vector<NodeId>& clone_id,
                                                                 const std::vector<NodeId>& clone_original) {
  const size_t n = scan.order.order.size();
  std::map<NodeId, int32_t> step_of_new;  // rewritten id of an original step -> its step
  for (size_t t = 0; t < n; ++t) step_of_new[new_id[scan.order.order[t]]] = static_cast<int32_t>(t);
  std::map<NodeId, NodeId> original_of_clone;
  for (size_t k = 0; k < clone_id.size(); ++k) original_of_clone[clone_id[k]] = clone_original[k];
  const std::vector<int32_t> stage_of = RecomputeStages(scan, AfterBoundary(graph, scan));
  std::vector<std::vector<int32_t>> stages(n);
  std::vector<int32_t> pending;
  int32_t last = -1;
  for (NodeId id : rewritten_order.order) {
    if (auto it = step_of_new.find(id); it != step_of_new.end()) {
      if (it->second <= last) return InternalError("the rewritten order runs the original steps out of order");
      last = it->second;
      const int32_t stage = stage_of[static_cast<size_t>(last)];
      for (int32_t i : pending) {
        if (i >= stage) return InternalError("a clone inside a batch recomputes a step of the batch");
      }
      std::vector<int32_t>& into = stages[static_cast<size_t>(stage)];
      into.insert(into.end(), pending.begin(), pending.end());
      pending.clear();
      continue;
    }
    auto clone = original_of_clone.find(id);
    if (clone == original_of_clone.end()) return InternalError("a rewritten node is neither a step nor a clone");
    const int32_t original = scan.order.position[clone->second];
    if (original <= last) pending.push_back(original);
    else return InternalError("a clone runs before the step it recomputes");
  }
  if (!pending.empty()) return InternalError("clones run after the last step");
  for (auto& stage : stages) {
    std::sort(stage.begin(), stage.end());
    stage.erase(std::unique(stage.begin(), stage.end()), stage.end());
  }
  return stages;
}

}  // namespace memopt
