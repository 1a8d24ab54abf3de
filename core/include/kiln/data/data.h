// kiln::data: datasets, samplers, collation, the DataLoader and data sources from plugins; and
// libtorch's shapes of them (namespaces datasets, samplers and transforms; make_data_loader).
#pragma once

#include <kiln/data/collate.h>
#include <kiln/data/dataloader.h>
#include <kiln/data/dataloader_options.h>
#include <kiln/data/dataset.h>
#include <kiln/data/datasets.h>
#include <kiln/data/detail/data_shuttle.h>
#include <kiln/data/detail/sequencers.h>
#include <kiln/data/example.h>
#include <kiln/data/pin_memory.h>
#include <kiln/data/sample.h>
#include <kiln/data/sampler.h>
#include <kiln/data/samplers.h>
#include <kiln/data/source.h>
#include <kiln/data/tar_writer.h>
#include <kiln/data/transforms.h>
#include <kiln/data/transforms/collate.h>
#include <kiln/data/transforms/stack.h>
#include <kiln/data/transforms/tensor.h>
#include <kiln/data/worker_exception.h>
#include <kiln/serialize/archive.h>
