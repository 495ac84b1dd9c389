// The page's script and style (assets/report.js, assets/report.css), compiled in by CMake.
#pragma once

namespace tessera::htmlreport {

extern const char* const kReportJs;
extern const char* const kReportCss;

}  // namespace tessera::htmlreport
