// kiln::models: torchvision's image classification architectures, built from kiln::nn modules
// under torchvision's parameter and buffer names, so that its state_dicts load by name
// (kiln::load(*model, "weights.safetensors")): ResNet-18/34/50 and MobileNetV2; nanoGPT's GPT
// under its names; and PyTorch's word-language-model LSTM (LSTMLM).
#pragma once

#include <kiln/models/gpt.h>
#include <kiln/models/lstm_lm.h>
#include <kiln/models/mobilenet.h>
#include <kiln/models/resnet.h>
