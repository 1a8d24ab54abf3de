// kiln::data: datasets, samplers, collation, the DataLoader and data sources from plugins.
#pragma once

#include <kiln/data/collate.h>
#include <kiln/data/dataloader.h>
#include <kiln/data/dataloader_options.h>
#include <kiln/data/dataset.h>
#include <kiln/data/pin_memory.h>
#include <kiln/data/sample.h>
#include <kiln/data/sampler.h>
#include <kiln/data/source.h>
#include <kiln/data/tar_writer.h>
#include <kiln/data/transforms.h>
