#include "htmlreport/page.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/file_io.h"
#include "htmlreport/assets.h"
#include "htmlreport/sections.h"
#include "htmlreport/timeline.h"

namespace tessera::htmlreport {
namespace {

// Errors and console.error calls land in #js-errors (the browser test reads it); the page writes
// how long it took to draw into #load-ms and sets data-rendered on <body> when done.
constexpr const char* kErrorCapture = R"(<script>
(function () {
  var errors = [];
  function note(text) {
    errors.push(String(text));
    var el = document.getElementById("js-errors");
    if (el) { el.textContent = errors.join("\n"); el.hidden = false; }
  }
  window.tesseraErrors = errors;
  window.addEventListener("error", function (e) { note(e.message + " at " + e.filename + ":" + e.lineno); });
  var original = console.error;
  console.error = function () { note(Array.prototype.join.call(arguments, " ")); original.apply(console, arguments); };
})();
</script>)";

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// JSON text safe inside <script>: "<" only occurs in strings, where \u003c means the same.
std::string script_json(const Json& j) {
  std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

std::string read_library() {
  try {
    return read_file(kChartLibrary, "chart library");
  } catch (const Error& e) {
    throw Error(kChartLibrary,
                e.why() + " (the report embeds d3: install the Debian package libjs-d3)");
  }
}

}  // namespace

Json page_data(const std::vector<Input>& in, Json timeline) {
  Json runs = Json::array(), sections = Json::array();
  std::string title;
  for (const Input& i : in) {
    runs.push_back({{"label", i.label}, {"path", i.path}, {"kind", kind_name(i.kind)}});
    title += (title.empty() ? "" : ", ") + i.label;
  }
  for (Json s :
       {summary_section(in), stalls_section(in), utilisation_section(in), energy_section(in),
        training_section(in), layers_section(in), term_serial_section(in), suite_section(in),
        many_chip_section(in), mapper_section(in), compare_section(in), std::move(timeline)})
    if (!s.is_null()) sections.push_back(std::move(s));
  return Json{{"title", "tessera report: " + title}, {"runs", runs}, {"sections", sections}};
}

std::string render_page(const Json& data, const std::string& library) {
  const std::string title = html_escape(text_at(data, "title", "tessera report"));
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{0}</title>\n"
      "<style>\n{1}</style>\n{2}\n</head>\n<body>\n<header><h1>{0}</h1><nav id=\"toc\"></nav>"
      "</header>\n<pre id=\"js-errors\" hidden></pre>\n<main id=\"sections\"></main>\n"
      "<footer>drawn in <span id=\"load-ms\"></span> ms</footer>\n"
      "<script>\n{3}\n</script>\n<script id=\"report-data\" "
      "type=\"application/json\">{4}</script>\n"
      "<script>\n{5}</script>\n</body>\n</html>\n",
      title, kReportCss, kErrorCapture, library, script_json(data), kReportJs);
}

void write_report(const std::vector<std::string>& paths, const std::string& trace,
                  const std::string& out) {
  const std::vector<Input> in = read_inputs(paths);
  Json data = page_data(in, trace.empty() ? Json(nullptr) : timeline_section(trace));
  write_file(out, render_page(data, read_library()), "HTML report");
}

void write_report(const Input& in, OutputFile& out) {
  out.write(render_page(page_data({in}, nullptr), read_library()));
  out.close();
}

}  // namespace tessera::htmlreport
