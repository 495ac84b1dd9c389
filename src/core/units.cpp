#include "core/units.h"

#include "core/units/dma_unit.h"
#include "core/units/eup_unit.h"
#include "core/units/mxu_unit.h"
#include "core/units/reduce_permute_unit.h"
#include "core/units/rng_unit.h"
#include "core/units/transpose_unit.h"
#include "core/units/vector_memory_unit.h"
#include "core/units/vector_unit.h"

namespace tessera::core {

UnitTable core_units() {
  static const UnitRegistration kUnits[] = {
      {isa::Unit::Vector, make_unit<VectorUnit>},
      {isa::Unit::VectorMem, make_unit<VectorMemoryUnit>},
      {isa::Unit::Dma, make_unit<DmaUnit>},
      {isa::Unit::Mxu, make_unit<MxuUnit>, MxuUnit::read_spec},
      {isa::Unit::Xu, make_unit<TransposeUnit>, TransposeUnit::read_spec},
      {isa::Unit::Rpu, make_unit<ReducePermuteUnit>, ReducePermuteUnit::read_spec},
      {isa::Unit::Eup, make_unit<EupUnit>, EupUnit::read_spec},
      {isa::Unit::Rng, make_unit<RngUnit>, RngUnit::read_spec},
  };
  return kUnits;
}

}  // namespace tessera::core
