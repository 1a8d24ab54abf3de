// Transforms: sample-to-sample functions for map() (kiln/data/dataset.h), in the spirit of
// torchvision's transforms and WebDataset's to_tuple/rename stages.
//
//   auto ds = kiln::data::map(tar, kiln::data::transforms::compose({
//       kiln::data::transforms::map_field("jpg", [](kiln::data::Sample s) { ... }),
//       kiln::data::transforms::to_tuple({"jpg", "cls"})}));
#pragma once

#include <kiln/data/dataset.h>
#include <kiln/export.h>

#include <string>
#include <vector>

namespace kiln::data::transforms {

// (data::Transform, kiln's sample function, is spelled out: this namespace also holds libtorch's
// class template transforms::Transform<In, Out>, kiln/data/transforms/base.h.)

// Applies `transforms` in order.
KILN_API data::Transform compose(std::vector<data::Transform> transforms);
// A map sample -> the list of its fields `names`, in that order (["jpg", "cls"]); a missing
// field raises kiln::IndexError listing the fields the sample has.
KILN_API data::Transform to_tuple(std::vector<std::string> names);
// A map sample -> the map of only its fields `names` (missing ones raise, as to_tuple).
KILN_API data::Transform select(std::vector<std::string> names);
// Replaces field `name` of a map sample by fn(field).
KILN_API data::Transform map_field(std::string name, data::Transform fn);
// A uint8 image field [H, W, C] -> float32 [C, H, W] scaled to [0, 1], as torchvision's ToTensor.
KILN_API data::Transform to_chw_float(std::string name);

}  // namespace kiln::data::transforms
