// The sections of the report page, one builder per file. Each turns the inputs into a section
// (chart.h) or returns null when no input has its data; the page shows sections in the order of
// page.cpp.
#pragma once

#include <string>
#include <vector>

#include "htmlreport/chart.h"
#include "htmlreport/input.h"

namespace tessera::htmlreport {

// section_summary.cpp: per run, the machine (config name, hash), workload, simulated and host
// time, energy.
Json summary_section(const std::vector<Input>& in);
// section_units.cpp: stalls by cause, utilisation per unit, energy by unit.
Json stalls_section(const std::vector<Input>& in);
Json utilisation_section(const std::vector<Input>& in);
Json energy_section(const std::vector<Input>& in);
// section_training.cpp: loss and accuracy per epoch, optimizer cycles per step, times per epoch.
Json training_section(const std::vector<Input>& in);
// section_layers.cpp: the MXU work per layer and phase; the term-serial speed-up and term shares.
Json layers_section(const std::vector<Input>& in);
Json term_serial_section(const std::vector<Input>& in);
// "<layer> <phase>" of an entry of a training report's pe.layers: how runs are aligned by layer.
std::string layer_name(const Json& layer);
// section_suite.cpp: the workload suite's cycles against the roofline bound per workload.
Json suite_section(const std::vector<Input>& in);
// section_many_chip.cpp: topology with per-link utilisation, supersteps, compute/exchange/overlap.
Json many_chip_section(const std::vector<Input>& in);
// section_mapper.cpp: the mesh with link loads and nodes coloured by community; method costs.
Json mapper_section(const std::vector<Input>& in);
// section_compare.cpp: two or more runs side by side, aligned by layer.
Json compare_section(const std::vector<Input>& in);

// The kinds' display names ("train", "run", ...).
const char* kind_name(Kind k);

}  // namespace tessera::htmlreport
