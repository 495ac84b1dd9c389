#include "system/machine_spec.h"

namespace tessera::system {

MachineSpec read_machine_spec(ConfigReader& reader) {
  MachineSpec m;
  m.core = core::read_core_spec(reader);
  m.system = read_system_spec(reader);
  return m;
}

MachineSpec load_machine_spec(const std::string& path) {
  ConfigReader r = path.empty() ? ConfigReader::from_string("{}", "<built-in defaults>")
                                : ConfigReader::from_file(path);
  MachineSpec m = read_machine_spec(r);
  r.finish();
  return m;
}

}  // namespace tessera::system
