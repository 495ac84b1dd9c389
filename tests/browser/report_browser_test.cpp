// HTML reports of small runs, opened in headless Chromium (Debian's chromium): each page runs its
// scripts with no error (the page collects window errors and console.error into #js-errors) and
// loads nothing (no <script src>, <link> or <img>; no failed request in Chromium's log); each
// expected section is there and every chart in it drew elements; the summary shows the JSON's
// numbers. A screenshot of each page is written to <build>/browser/.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_run.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using tessera::testing::run_cli;

constexpr const char* kChromium = "/usr/bin/chromium";

std::string source(const std::string& path) {
  return std::string(TESSERA_SOURCE_DIR) + "/" + path;
}

// A fresh directory under <build>/browser/ named after the test.
std::string out_dir() {
  const fs::path d = fs::path(TESSERA_BINARY_DIR) / "browser" /
                     ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

json read_json(const std::string& path) {
  return json::parse(read(path));
}

// `tessera ARGS`, which must succeed.
void tessera(const std::string& args) {
  const auto r = run_cli(args, true);
  ASSERT_EQ(r.status, 0) << "tessera " << args << "\n" << r.out;
}

// `tessera ARGS` with its standard output written to `path`.
void tessera_to(const std::string& args, const std::string& path) {
  const auto r = run_cli(args);
  ASSERT_EQ(r.status, 0) << "tessera " << args;
  std::ofstream(path) << r.out;
}

struct Page {
  std::string dom, log;
};

// Chromium's DOM of `html` after its scripts ran (and its log), and a screenshot beside it.
Page open_page(const std::string& html) {
  const std::string dir = html + ".chromium", log = html + ".log", dom = html + ".dom";
  const std::string flags =
      "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
      "--disable-background-networking --disable-component-update --disable-sync "
      "--virtual-time-budget=10000 --user-data-dir=" +
      dir;
  const std::string url = "file://" + html;
  EXPECT_EQ(
      std::system((std::string(kChromium) + " " + flags +
                   " --enable-logging=stderr --v=0 --dump-dom " + url + " >" + dom + " 2>" + log)
                      .c_str()),
      0);
  EXPECT_EQ(std::system((std::string(kChromium) + " " + flags +
                         " --window-size=1280,4000 --screenshot=" + html + ".png " + url +
                         " >/dev/null 2>&1")
                            .c_str()),
            0);
  fs::remove_all(dir);
  return {read(dom), read(log)};
}

// The HTML of <section id="id">, or "" when the page has none.
std::string section(const std::string& dom, const std::string& id) {
  const auto start = dom.find("<section id=\"" + id + "\"");
  if (start == std::string::npos) return "";
  return dom.substr(start, dom.find("</section>", start) - start);
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// Every figure of the section drew something: SVG shapes or table cells.
void expect_charts_drawn(const std::string& dom, const std::string& id) {
  const std::string s = section(dom, id);
  ASSERT_FALSE(s.empty()) << "no section " << id;
  size_t figures = 0;
  for (auto p = s.find("<figure"); p != std::string::npos;
       p = s.find("<figure", p + 1), ++figures) {
    const std::string fig = s.substr(p, s.find("</figure>", p) - p);
    const size_t drawn = count(fig, "<rect") + count(fig, "<path") + count(fig, "<circle") +
                         count(fig, "<line") + count(fig, "<td");
    EXPECT_GT(drawn, 0u) << "an empty chart in section " << id << ": " << fig.substr(0, 200);
  }
  EXPECT_GT(figures, 0u) << "section " << id;
}

void expect_clean_load(const Page& p) {
  EXPECT_NE(p.dom.find("data-rendered=\"1\""), std::string::npos) << "the page did not finish";
  EXPECT_NE(p.dom.find("<pre id=\"js-errors\" hidden=\"\"></pre>"), std::string::npos)
      << "script errors: " << section(p.dom, "js-errors");
  for (const char* loads : {"<script src", "<link", "<img", "<iframe"})
    EXPECT_EQ(p.dom.find(loads), std::string::npos) << loads;
  for (const char* failure : {"net::ERR", "Failed to load resource", "Uncaught"})
    EXPECT_EQ(p.log.find(failure), std::string::npos) << failure;
}

// The summary's data-value of `key` for run `run` (as the page wrote it: the JSON's number).
std::map<std::string, std::string> summary_values(const std::string& dom, int run) {
  std::map<std::string, std::string> v;
  const std::regex cell("data-key=\"([a-z_]+)\" data-run=\"" + std::to_string(run) +
                        "\" data-value=\"([^\"]*)\"");
  for (std::sregex_iterator it(dom.begin(), dom.end(), cell), end; it != end; ++it)
    v[(*it)[1]] = (*it)[2];
  return v;
}

void expect_value(const std::map<std::string, std::string>& shown, const std::string& key,
                  double want) {
  ASSERT_TRUE(shown.count(key)) << key;
  EXPECT_DOUBLE_EQ(std::stod(shown.at(key)), want) << key;
}

double epoch_sum(const json& report, const char* key) {
  double s = 0;
  for (const json& e : report["epochs"]) s += e[key].get<double>();
  return s;
}

void expect_training_summary(const std::string& dom, int run, const json& r) {
  const auto shown = summary_values(dom, run);
  EXPECT_EQ(shown.at("config"), r["config"]);
  EXPECT_EQ(shown.at("config_hash"), r["config_hash"]);
  expect_value(shown, "sim_seconds", epoch_sum(r, "sim_seconds"));
  expect_value(shown, "host_seconds", epoch_sum(r, "host_seconds"));
  if (r["epochs"][0].contains("energy_j")) {
    expect_value(shown, "energy_j", epoch_sum(r, "energy_j"));
    expect_value(shown, "sim_cycles", epoch_sum(r, "sim_cycles"));
  }
}

// The layers section's roofline has both roofs and one point per layer and phase (of each run's
// last epoch) with HBM bytes and cycles; the training section draws the per-step loss and cycles,
// one point per step of each run.
void expect_roofline_and_step_curves(const std::string& dom, const std::vector<json>& runs) {
  const std::string layers = section(dom, "layers"), training = section(dom, "training");
  EXPECT_EQ(count(layers, "data-chart=\"roofline\""), 1u);
  EXPECT_EQ(count(layers, "class=\"line roof\""), 2u);
  size_t points = 0, steps = 0;
  for (const json& r : runs) {
    for (const json& l : r["epochs"].back()["pe"]["layers"])
      if (l["hbm_bytes"].get<double>() > 0 && l["cycles"].get<double>() > 0) ++points;
    for (const json& e : r["epochs"]) {
      ASSERT_EQ(e["per_step"]["loss"].size(), e["optimizer"]["per_step"]["cycles"].size());
      ASSERT_EQ(e["per_step"]["cycles"].size(), e["per_step"]["loss"].size());
      steps += e["per_step"]["loss"].size();
    }
  }
  EXPECT_GT(points, 0u);
  EXPECT_EQ(count(layers, "class=\"point\""), points);
  for (const char* title : {"Loss per step", "Simulated cycles per step"}) {
    const auto at = training.find("<figcaption>" + std::string(title) + "</figcaption>");
    ASSERT_NE(at, std::string::npos) << title;
    const std::string fig = training.substr(at, training.find("</figure>", at) - at);
    EXPECT_EQ(count(fig, "<circle"), steps) << title;
  }
}

// The figure of `html` (a section) whose caption starts with `caption`, or "".
std::string figure(const std::string& html, const std::string& caption) {
  const auto at = html.find("<figcaption>" + caption);
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("</figure>", at) - at);
}

// The data-value attributes of the elements of `html` whose class attribute is `cls`, in order.
std::vector<double> values_of(const std::string& html, const std::string& cls) {
  std::vector<double> v;
  const std::regex element("class=\"" + cls + "\"[^>]*data-value=\"([^\"]*)\"");
  for (std::sregex_iterator it(html.begin(), html.end(), element), end; it != end; ++it)
    v.push_back(std::stod((*it)[1]));
  return v;
}

// A data-parallel report's per-step figures, drawn: the training section's loss and simulated
// seconds per step (a point per step), and in the many-chip section the step timeline (a span per
// step on each of its three tracks: steps, compute, exchange) and the stacked bars per step whose
// overlap and compute-only parts equal the JSON's.
void expect_data_parallel_steps(const std::string& dom, const json& r) {
  std::vector<double> compute, overlap;
  for (const json& e : r["epochs"]) {
    const json& s = e["per_step"];
    ASSERT_EQ(s["loss"].size(), e["steps"].get<size_t>());
    for (const char* k : {"seconds", "compute_seconds", "exchange_seconds", "overlap_seconds",
                          "barrier_seconds", "supersteps"})
      ASSERT_EQ(s[k].size(), s["loss"].size()) << k;
    for (size_t i = 0; i < s["loss"].size(); ++i) {
      overlap.push_back(s["overlap_seconds"][i]);
      compute.push_back(s["compute_seconds"][i].get<double>() - overlap.back());
    }
  }
  ASSERT_FALSE(overlap.empty());
  const std::string training = section(dom, "training"), chips = section(dom, "many-chip");
  for (const char* title : {"Loss per step", "Simulated seconds per step"})
    EXPECT_EQ(count(figure(training, title), "<circle"), overlap.size()) << title;
  const std::string timeline = figure(chips, "Training steps and their supersteps");
  EXPECT_EQ(count(timeline, "class=\"span\""), 3 * overlap.size());
  const std::string bars = figure(chips, "dp.json: compute, exchange and overlap per step");
  EXPECT_EQ(count(bars, "class=\"bar stacked"), 4 * overlap.size());
  const std::vector<double> shown_compute = values_of(bars, "bar stacked series-0"),
                            shown_overlap = values_of(bars, "bar stacked series-1");
  ASSERT_EQ(shown_compute.size(), compute.size());
  ASSERT_EQ(shown_overlap.size(), overlap.size());
  for (size_t i = 0; i < overlap.size(); ++i) {
    EXPECT_DOUBLE_EQ(shown_compute[i], compute[i]) << "step " << i + 1;
    EXPECT_DOUBLE_EQ(shown_overlap[i], overlap[i]) << "step " << i + 1;
  }
}

class BrowserReport : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kChromium)) GTEST_SKIP() << kChromium << " is not installed";
    if (!tessera::testing::cli_binary_exists()) GTEST_SKIP() << "tessera is not built";
  }
};

const std::string kTrain = "train --model mlp --dataset fashion-mnist --batch 32 --seed 0 ";

TEST_F(BrowserReport, ARunWithItsTraceShowsUnitsStallsEnergyAndATimeline) {
  const std::string d = out_dir();
  tessera("run " + source("examples/matmul.s") + " --stats " + d + "/s.json --trace " + d +
          "/t.json --html " + d + "/run.html");
  tessera("report " + d + "/s.json --trace " + d + "/t.json -o " + d + "/report.html");
  const Page p = open_page(d + "/report.html");
  expect_clean_load(p);
  for (const char* id : {"summary", "stalls", "utilisation", "energy", "timeline"})
    expect_charts_drawn(p.dom, id);
  const json s = read_json(d + "/s.json");
  const auto shown = summary_values(p.dom, 0);
  expect_value(shown, "sim_cycles", s["cycles"].get<double>());
  expect_value(shown, "sim_seconds", s["seconds"].get<double>());
  expect_value(shown, "energy_j", s["energy"]["total_uj"].get<double>() * 1e-6);
  EXPECT_EQ(shown.at("config"), s["config"]);

  const Page html = open_page(d + "/run.html");  // the page `run --html` wrote
  expect_clean_load(html);
  for (const char* id : {"summary", "stalls", "utilisation", "energy"})
    expect_charts_drawn(html.dom, id);
}

TEST_F(BrowserReport, BitParallelAgainstTermSerialSideBySide) {
  const std::string d = out_dir();
  tessera(kTrain + "--epochs 2 --steps 2 --report " + d + "/bit-parallel.json --html " + d +
          "/train.html");
  tessera(kTrain + "--epochs 1 --steps 2 --pe term-serial --report " + d + "/term-serial.json");
  tessera("report " + d + "/bit-parallel.json " + d + "/term-serial.json -o " + d + "/report.html");
  const Page p = open_page(d + "/report.html");
  expect_clean_load(p);
  for (const char* id :
       {"summary", "utilisation", "energy", "training", "layers", "term-serial", "compare"})
    expect_charts_drawn(p.dom, id);
  expect_training_summary(p.dom, 0, read_json(d + "/bit-parallel.json"));
  expect_training_summary(p.dom, 1, read_json(d + "/term-serial.json"));
  expect_roofline_and_step_curves(
      p.dom, {read_json(d + "/bit-parallel.json"), read_json(d + "/term-serial.json")});

  const Page html = open_page(d + "/train.html");
  expect_clean_load(html);
  for (const char* id : {"summary", "training", "layers"}) expect_charts_drawn(html.dom, id);
}

TEST_F(BrowserReport, DataParallelOnEightProcessorsAndAnAllReduce) {
  const std::string d = out_dir();
  tessera(kTrain + "--epochs 1 --steps 2 --chips 4 --cores-per-chip 2 --config " +
          source("configs/board4.json") + " --report " + d + "/dp.json");
  tessera_to("bench allreduce --chips 8 --bytes 65536 --topology ring --json --html " + d +
                 "/allreduce.html",
             d + "/allreduce.json");
  tessera("report " + d + "/dp.json " + d + "/allreduce.json -o " + d + "/report.html");
  const Page p = open_page(d + "/report.html");
  expect_clean_load(p);
  for (const char* id : {"summary", "training", "many-chip"}) expect_charts_drawn(p.dom, id);
  EXPECT_GT(count(section(p.dom, "many-chip"), "class=\"link\""), 0u);  // the topology
  const json dp = read_json(d + "/dp.json"), ar = read_json(d + "/allreduce.json");
  EXPECT_EQ(dp["processors"], 8);
  expect_training_summary(p.dom, 0, dp);
  expect_data_parallel_steps(p.dom, dp);
  expect_value(summary_values(p.dom, 1), "sim_seconds", ar["sim_seconds"].get<double>());
  // The all-reduce's supersteps: per superstep a compute, an exchange and a closing barrier span,
  // and a barrier span before the exchange when it waits for one.
  const json& spans = ar["superstep_spans"];
  size_t want = 0;
  for (size_t k = 0; k < spans["arrived"].size(); ++k)
    want += 3 + (spans["posted"][k] > spans["arrived"][k] ? 1 : 0);
  EXPECT_EQ(spans["arrived"].size(), ar["supersteps"].get<size_t>());
  EXPECT_EQ(count(figure(section(p.dom, "many-chip"), "All-reduce supersteps"), "class=\"span\""),
            want);
  expect_value(summary_values(p.dom, 1), "host_seconds", ar["host_seconds"].get<double>());

  const Page html = open_page(d + "/allreduce.html");
  expect_clean_load(html);
  expect_charts_drawn(html.dom, "many-chip");
}

TEST_F(BrowserReport, AMappingAndAMapperSuite) {
  const std::string d = out_dir();
  tessera("map --family mlp --nodes 64 --mesh 8x8 --method greedy --out " + d +
          "/map.json --html " + d + "/map.html");
  tessera(
      "map bench --suite S --seeds 1 --methods greedy,snake,hilbert --families mlp,conv --out " +
      d + "/bench.json");
  tessera("report " + d + "/map.json " + d + "/bench.json -o " + d + "/report.html");
  const Page p = open_page(d + "/report.html");
  expect_clean_load(p);
  for (const char* id : {"summary", "mapper"}) expect_charts_drawn(p.dom, id);
  const std::string mapper = section(p.dom, "mapper");
  EXPECT_EQ(count(mapper, "class=\"core\""), 64u);  // every node placed
  EXPECT_GT(count(mapper, "class=\"link\""), 0u);
  // Cores coloured by their node's community, in placement order, with a legend entry for each.
  std::vector<int> want, shown;
  const json map = read_json(d + "/map.json");
  for (const json& n : map["placement"]) want.push_back(n["community"]);
  const std::regex cell("class=\"core\"[^>]*data-community=\"([0-9]+)\"");
  for (std::sregex_iterator it(mapper.begin(), mapper.end(), cell), end; it != end; ++it)
    shown.push_back(std::stoi((*it)[1]));
  EXPECT_EQ(shown, want);
  const size_t communities = std::set<int>(want.begin(), want.end()).size();
  EXPECT_GT(communities, 1u);
  for (size_t c = 0; c < communities; ++c)
    EXPECT_NE(mapper.find(">community " + std::to_string(c) + "</text>"), std::string::npos) << c;

  const Page html = open_page(d + "/map.html");
  expect_clean_load(html);
  expect_charts_drawn(html.dom, "mapper");
}

TEST_F(BrowserReport, AWorkloadSuiteShowsCyclesAgainstTheBoundAndItsUnsupportedRows) {
  const std::string d = out_dir();
  // A real suite run: two rows that run and one the suite refuses (bert_100: D not a multiple
  // of the head width).
  const std::string suite = d + "/suite.json";
  tessera_to("bench suite --config " + source("configs/tpu-v2-like.json") +
                 " --only 'gemm_256|layernorm_512x768|bert_100' --json --html " + d + "/suite.html",
             suite);
  tessera("report " + suite + " -o " + d + "/report.html");
  const Page direct = open_page(d + "/suite.html");
  expect_clean_load(direct);
  expect_charts_drawn(direct.dom, "suite");
  const Page p = open_page(d + "/report.html");
  expect_clean_load(p);
  for (const char* id : {"summary", "suite"}) expect_charts_drawn(p.dom, id);
  const json r = read_json(suite);
  std::vector<double> over_bound, cycles;
  double host = 0;
  for (const json& row : r["rows"]) {
    if (row.contains("host_seconds")) host += row["host_seconds"].get<double>();
    if (!row["supported"].get<bool>()) {
      EXPECT_NE(figure(section(p.dom, "suite"), "Unsupported workloads")
                    .find("<td>" + row["reason"].get<std::string>() + "</td>"),
                std::string::npos);
      continue;
    }
    over_bound.push_back(row["cycles_over_bound"]);
    cycles.push_back(row["cycles"]);
  }
  const std::string s = section(p.dom, "suite");
  EXPECT_EQ(values_of(figure(s, "Cycles over the roofline bound"), "bar series-0"), over_bound);
  EXPECT_EQ(count(s, "class=\"unit-line\""), 1u);  // the bound, on the log axis
  // The table's cycles column (the third) shows the JSON's numbers.
  const std::string table = figure(s, "Workloads");
  std::vector<double> shown;
  const std::regex row("<tr><td>[^<]*</td><td>[^<]*</td><td data-value=\"([^\"]*)\"");
  for (std::sregex_iterator it(table.begin(), table.end(), row), end; it != end; ++it)
    shown.push_back(std::stod((*it)[1]));
  EXPECT_EQ(shown, cycles);
  expect_value(summary_values(p.dom, 0), "host_seconds", host);
  EXPECT_EQ(summary_values(p.dom, 0).at("config"), r["config"]);
}

}  // namespace
