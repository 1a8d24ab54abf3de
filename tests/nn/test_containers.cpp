// kiln::OrderedDict and the containers (Sequential, ModuleList, ModuleDict, ParameterDict,
// ParameterList, AnyModule), with the cases and messages of libtorch's test/cpp/api
// (ordered_dict.cpp, sequential.cpp, modulelist.cpp, moduledict.cpp, parameterdict.cpp,
// parameterlist.cpp, any.cpp).
#include "golden.h"

#include <sstream>

namespace nn = kiln::nn;
using kiln::Tensor;

namespace {

template <class T>
using Dict = kiln::OrderedDict<std::string, T>;

std::string printed(const nn::Module& m) {
  std::ostringstream out;
  out << m;
  return out.str();
}

// A module whose forward takes and returns an int (libtorch's sequential tests' MockModule).
struct AddOne : nn::Module {
  explicit AddOne(int expected) : expected(expected) {}
  int forward(int value) {
    BOOST_CHECK_EQUAL(value, expected);
    return value + 1;
  }
  int expected;
};

struct Five : nn::Module {
  int forward() { return 5; }
};

// forward() with defaults declared for AnyModule (libtorch's any.cpp M_default_arg_with_macro).
struct WithDefaults : nn::Module {
  double forward(int a, int b = 2, double c = 3.0) { return a + b + c; }

 protected:
  FORWARD_HAS_DEFAULT_ARGS({1, nn::AnyValue(2)}, {2, nn::AnyValue(3.0)})
};
struct WithoutDefaults : nn::Module {
  double forward(int a, int b = 2, double c = 3.0) { return a + b + c; }
};
struct BadDefaults : nn::Module {
  double forward(int a, int b) { return a + b; }

 protected:
  FORWARD_HAS_DEFAULT_ARGS({0, nn::AnyValue(2)})  // not the last parameter
};

}  // namespace

BOOST_AUTO_TEST_SUITE(containers)

BOOST_AUTO_TEST_CASE(ordered_dict_access_and_errors) {
  Dict<int> empty;
  BOOST_CHECK_EQUAL(empty.key_description(), "Key");
  BOOST_CHECK(empty.is_empty() && empty.size() == 0);
  CHECK_ERROR(kiln::IndexError, empty.front(), "Called front() on an empty OrderedDict");
  CHECK_ERROR(kiln::IndexError, empty.back(), "Called back() on an empty OrderedDict");

  Dict<int> dict = {{"a", 1}, {"b", 2}};
  BOOST_CHECK_EQUAL(dict["a"], 1);
  BOOST_CHECK_EQUAL(dict.at("b"), 2);
  BOOST_CHECK_EQUAL(dict[0].key(), "a");
  BOOST_CHECK_EQUAL(*dict[1], 2);
  BOOST_CHECK_EQUAL(dict.at(1).value(), 2);  // a position, never a null key
  BOOST_CHECK_EQUAL(dict.front().key(), "a");
  BOOST_CHECK_EQUAL(dict.back().value(), 2);
  BOOST_CHECK(dict.find("z") == nullptr && *dict.find("b") == 2);
  BOOST_CHECK(dict.contains("a") && !dict.contains(""));
  CHECK_ERROR(kiln::IndexError, dict["foo"], "Key 'foo' is not defined");
  CHECK_ERROR(kiln::IndexError, dict[""], "Key '' is not defined");
  CHECK_ERROR(kiln::IndexError, dict[2], "Index 2 is out of bounds");
  CHECK_ERROR(kiln::ValueError, dict.insert("a", 1), "Key 'a' already defined");
  CHECK_ERROR(kiln::ValueError, (Dict<int>{{"x", 1}, {"x", 2}}), "Key 'x' already defined");

  Dict<int> penguins("Penguin");
  penguins.insert("a", 1);
  CHECK_ERROR(kiln::IndexError, penguins["b"], "Penguin 'b' is not defined");
  CHECK_ERROR(kiln::ValueError, penguins.insert("a", 1), "Penguin 'a' already defined");
  CHECK_ERROR(kiln::IndexError, penguins.erase("b"), "Penguin 'b' doesn't exist");

  Dict<std::pair<int, int>> braces;
  braces.insert("a", {1, 2});
  BOOST_CHECK_EQUAL(braces["a"].second, 2);
}

BOOST_AUTO_TEST_CASE(ordered_dict_update_pop_erase_and_copies) {
  Dict<int> dict = {{"a", 1}, {"b", 2}};
  Dict<int> other = {{"c", 3}};
  other.update(dict);
  BOOST_CHECK(other.keys() == std::vector<std::string>({"c", "a", "b"}));
  BOOST_CHECK(other.values() == std::vector<int>({3, 1, 2}));
  CHECK_ERROR(kiln::ValueError, other.update(dict), "Key 'a' already defined");

  BOOST_CHECK_EQUAL(other.pop("a"), 1);
  BOOST_CHECK(other.keys() == std::vector<std::string>({"c", "b"}));
  BOOST_CHECK_EQUAL(other["b"], 2);  // positions behind the removed item moved up
  BOOST_CHECK_EQUAL(other[1].key(), "b");
  CHECK_ERROR(kiln::IndexError, other.pop("a"), "Key 'a' is not defined");
  other.erase("c");
  BOOST_CHECK_EQUAL(other.size(), 1u);
  BOOST_CHECK_EQUAL(other["b"], 2);

  Dict<int> copy = dict;  // copies hold their own items
  copy["a"] = 10;
  BOOST_CHECK_EQUAL(dict["a"], 1);
  copy = other;
  BOOST_CHECK(copy.keys() == std::vector<std::string>({"b"}) && copy.find("a") == nullptr);
  Dict<int> moved = std::move(copy);
  BOOST_CHECK_EQUAL(moved["b"], 2);
  BOOST_CHECK(dict == (Dict<int>{{"a", 1}, {"b", 2}}));
  BOOST_CHECK(!(dict == moved));

  std::vector<std::pair<std::string, int>> pairs = dict.pairs();
  BOOST_CHECK(pairs[1] == std::make_pair(std::string("b"), 2));
  std::vector<Dict<int>::Item> items = dict.items();
  BOOST_CHECK_EQUAL(items[0].pair().second, 1);
  std::string keys;
  for (auto& [key, value] : dict) {  // structured bindings, value by reference
    keys += key;
    value *= 2;
  }
  BOOST_CHECK_EQUAL(keys, "ab");
  BOOST_CHECK_EQUAL(dict["b"], 4);
  const Dict<int>& const_dict = dict;
  for (const auto& [key, value] : const_dict) BOOST_CHECK_EQUAL(value % 2, 0);
  dict.clear();
  BOOST_CHECK(dict.is_empty());
}

BOOST_AUTO_TEST_CASE(sequential_named_any_and_errors) {
  nn::Sequential named({{"fc", nn::Linear(4, 3)}, {"act", nn::ReLU()}});
  BOOST_CHECK(named->named_children().keys() == std::vector<std::string>({"fc", "act"}));
  CHECK_ERROR(kiln::ValueError, (nn::Sequential({{"a", nn::ReLU()}, {"a", nn::Tanh()}})),
              "Submodule 'a' already defined");
  kiln::OrderedDict<std::string, nn::AnyModule> dict;
  dict.insert("first", nn::AnyModule(nn::Linear(1, 2)));
  dict.insert("second", nn::AnyModule(nn::Tanh()));
  nn::Sequential from_dict(std::make_shared<nn::SequentialImpl>(dict));
  BOOST_CHECK_EQUAL(from_dict->named_children()[1].key(), "second");

  named->push_back("out", nn::Linear(3, 1));
  named->extend(*from_dict);
  BOOST_CHECK_EQUAL(named->size(), 5u);
  BOOST_CHECK_EQUAL(named->named_children()[4].key(), "4");
  BOOST_CHECK(named->ptr(0).get() == named[0].get());
  BOOST_CHECK(named->ptr<nn::Linear>(0) != nullptr && named->ptr<nn::ReLUImpl>(0) == nullptr);
  BOOST_CHECK_EQUAL(named->at<nn::Linear>(2).options.in_features(), 3);
  CHECK_ERROR(kiln::IndexError, named->ptr(5), "Index out of range");
  CHECK_ERROR(kiln::IndexError, named->at<nn::LinearImpl>(1000000), "Index out of range");
  int modules = 0;
  for (const nn::AnyModule& m : *named) modules += !m.is_empty();
  BOOST_CHECK_EQUAL(modules, 5);

  // forward()s of other signatures, through AnyModule
  nn::Sequential chain(AddOne(1), AddOne(2), AddOne(3));
  BOOST_CHECK_EQUAL(chain->forward<int>(1), 4);
  nn::Sequential five(Five{});
  BOOST_CHECK_EQUAL(five->forward<int>(), 5);
  CHECK_ERROR(kiln::TypeError, five->forward<float>(),
              "The type of the return value is int, but you asked for type float");
  CHECK_ERROR(kiln::TypeError, chain->forward<int>(1.5),
              "Expected argument #0 to be of type int, but received value of type double");
  CHECK_ERROR(kiln::ValueError, chain->forward<int>(), "expects 1 argument(s), but received 0");
  CHECK_ERROR(kiln::Error, nn::Sequential()->forward<int>(1),
              "Cannot call forward() on an empty Sequential");
  Tensor x = kiln::ones({2, 4});
  BOOST_CHECK(named->forward<Tensor>(x).equal(named->forward(x)));

  nn::AnyModule any(nn::Linear(4, 2));
  BOOST_CHECK_EQUAL(any.forward(x).size(1), 2);
  BOOST_CHECK_EQUAL(any.get<nn::Linear>()->options.out_features(), 2);
  CHECK_ERROR(kiln::TypeError, any.get<nn::ReLU>(), "Attempted to cast module of type");
  CHECK_ERROR(kiln::TypeError, any.forward<int>(x), "but you asked for type int");
  nn::AnyModule none;
  BOOST_CHECK(none.is_empty());
  CHECK_ERROR(kiln::Error, none.forward(x), "Cannot call forward() on an empty AnyModule");
  nn::AnyValue value(3);
  BOOST_CHECK_EQUAL(value.get<int>(), 3);
  BOOST_CHECK(value.try_get<float>() == nullptr);
  CHECK_ERROR(kiln::TypeError, value.get<float>(),
              "Attempted to cast AnyValue to float, but its actual type is int");
  BOOST_CHECK_EQUAL(printed(*nn::Sequential()), "kiln::nn::Sequential");
}

BOOST_AUTO_TEST_CASE(module_list_insert_extend_and_access) {
  nn::ModuleList list(nn::Linear(3, 4), nn::ReLU());
  list->insert(0, nn::Tanh());
  list->insert(3, nn::Sigmoid());
  list->insert(2, std::make_shared<nn::IdentityImpl>());
  BOOST_CHECK_EQUAL(list->size(), 5u);
  std::vector<std::string> kinds;
  for (const auto& [name, m] : list->named_children()) kinds.push_back(name + "=" + m->name());
  BOOST_CHECK(kinds == std::vector<std::string>({"0=kiln::nn::TanhImpl", "1=kiln::nn::LinearImpl",
                                                 "2=kiln::nn::IdentityImpl", "3=kiln::nn::ReLUImpl",
                                                 "4=kiln::nn::SigmoidImpl"}));
  BOOST_CHECK_EQUAL(list->at<nn::Linear>(1).options.out_features(), 4);
  BOOST_CHECK(list->ptr<nn::ReLUImpl>(3) != nullptr);
  CHECK_ERROR(kiln::IndexError, list->insert(9, nn::ReLU()), "Index out of range");
  CHECK_ERROR(kiln::IndexError, list->ptr(5), "Index out of range");
  CHECK_ERROR(kiln::TypeError, list->at<nn::Linear>(0), "is a kiln::nn::TanhImpl");
  std::vector<std::shared_ptr<nn::Module>> more = {std::make_shared<nn::ReLUImpl>()};
  list->extend(more);
  list->extend(*list);  // appends each of its 6 modules once
  BOOST_CHECK_EQUAL(list->size(), 12u);
  BOOST_CHECK(list[11].get() == list[5].get());
  BOOST_CHECK_EQUAL(list->parameters().size(), 2u);  // a module listed twice counts once
  BOOST_CHECK(nn::ModuleList()->is_empty());
}

BOOST_AUTO_TEST_CASE(module_dict) {
  kiln::OrderedDict<std::string, std::shared_ptr<nn::Module>> ordered = {
      {"linear", nn::Linear(10, 3).ptr()}, {"relu", nn::ReLU().ptr()}};
  nn::ModuleDict dict(ordered);
  BOOST_CHECK_EQUAL(dict->size(), 2u);
  BOOST_CHECK(dict->keys() == std::vector<std::string>({"linear", "relu"}));
  BOOST_CHECK(dict["linear"].get() == ordered["linear"].get());
  BOOST_CHECK_EQUAL(dict->at<nn::Linear>("linear").options.in_features(), 10);
  CHECK_ERROR(kiln::TypeError, dict->at<nn::Linear>("relu"),
              "Unable to cast module[relu] to kiln::nn::LinearImpl");
  CHECK_ERROR(kiln::IndexError, dict["nope"], "Key 'nope' is not defined");
  BOOST_CHECK_EQUAL(dict->parameters().size(), 2u);

  // update replaces existing keys in place and appends new ones
  std::vector<std::pair<std::string, std::shared_ptr<nn::Module>>> list = {
      {"relu", nn::Tanh().ptr()}, {"head", nn::Linear(3, 1).ptr()}};
  dict->update(list);
  BOOST_CHECK(dict->keys() == std::vector<std::string>({"linear", "relu", "head"}));
  BOOST_CHECK(dict["relu"]->as<nn::Tanh>() != nullptr);
  BOOST_CHECK(dict->named_children()["relu"].get() == dict["relu"].get());
  nn::ModuleDict other;
  other->update(*dict);
  BOOST_CHECK_EQUAL(other->size(), 3u);
  BOOST_CHECK(other->contains("head") && !other->contains("x"));

  // pop and clear unregister, as PyTorch's
  std::shared_ptr<nn::Module> head = dict->pop("head");
  BOOST_CHECK(head->as<nn::Linear>() != nullptr);
  BOOST_CHECK_EQUAL(dict->parameters().size(), 2u);
  CHECK_ERROR(kiln::IndexError, dict->pop("head"), "Key 'head' is not defined");
  BOOST_CHECK_EQUAL(printed(*dict),
                    "kiln::nn::ModuleDict(\n"
                    "  (linear): kiln::nn::Linear(in_features=10, out_features=3, bias=true)\n"
                    "  (relu): kiln::nn::Tanh()\n"
                    ")");
  dict->clear();
  BOOST_CHECK(dict->empty() && dict->children().empty());
  int n = 0;
  for (const auto& item : *other) n += item.value() != nullptr;
  BOOST_CHECK_EQUAL(n, 3);
}

BOOST_AUTO_TEST_CASE(parameter_dict_and_list) {
  kiln::manual_seed(0);
  nn::ParameterDict dict;
  Tensor a = kiln::randn({1, 2}).requires_grad_();
  Tensor b = kiln::randn({1, 2});
  dict->insert("A", a);
  dict->insert("B", b);
  BOOST_CHECK_EQUAL(dict->size(), 2u);
  BOOST_CHECK(dict["A"].is_same(a) && dict->get("B").is_same(b));
  BOOST_CHECK(a.requires_grad() && !b.requires_grad());  // requires_grad as given
  BOOST_CHECK_EQUAL(dict->parameters().size(), 2u);      // all registered parameters
  CHECK_ERROR(kiln::ValueError, dict->insert("A", b), "Parameter 'A' already defined");
  CHECK_ERROR(kiln::IndexError, dict["C"], "Parameter 'C' is not defined");
  BOOST_CHECK_EQUAL(printed(*dict), "kiln::nn::ParameterDict(\n"
                                    "(A): Parameter containing: [Float of size [1, 2]]\n"
                                    "(B): Parameter containing: [Float of size [1, 2]]\n"
                                    ")");
  Tensor popped = dict->pop("A");
  BOOST_CHECK(popped.is_same(a) && !dict->contains("A"));
  BOOST_CHECK_EQUAL(dict->named_parameters().size(), 1u);
  kiln::OrderedDict<std::string, Tensor> replace = {{"B", a}, {"C", kiln::zeros({3})}};
  dict->update(replace);
  BOOST_CHECK(dict["B"].is_same(a) && dict->keys() == std::vector<std::string>({"B", "C"}));
  nn::ParameterDict from_dict(replace);
  BOOST_CHECK_EQUAL(from_dict->values().size(), 2u);
  dict->clear();
  BOOST_CHECK(dict->empty() && dict->parameters().empty());

  nn::ParameterList list(kiln::randn({1, 2}).requires_grad_(), kiln::randn({3}));
  list->append(kiln::randn({2, 2}, kiln::kDouble));
  BOOST_CHECK_EQUAL(list->size(), 3u);
  BOOST_CHECK_EQUAL(list[2].dtype(), kiln::kDouble);
  BOOST_CHECK(list->named_parameters().keys() == std::vector<std::string>({"0", "1", "2"}));
  CHECK_ERROR(kiln::IndexError, list->at(3), "Index out of range");
  nn::ParameterList more;
  more->extend(*list);  // items: keys dropped, renumbered
  *more += *more;
  BOOST_CHECK_EQUAL(more->size(), 6u);
  BOOST_CHECK(more[5].is_same(list[2]));
  BOOST_CHECK_EQUAL(printed(*nn::ParameterList(kiln::zeros({2}, kiln::kLong))),
                    "kiln::nn::ParameterList(\n(0): Parameter containing: [Long of size [2]]\n)");
  BOOST_CHECK(nn::ParameterList()->is_empty());
}

BOOST_AUTO_TEST_CASE(any_module_defaults_assignment_and_holders) {
  nn::AnyModule with(WithDefaults{});
  BOOST_TEST(with.forward<double>(1) == 6.0);
  BOOST_TEST(with.forward<double>(1, 3) == 7.0);
  BOOST_TEST(with.forward<double>(1, 3, 5.0) == 9.0);
  CHECK_ERROR(kiln::ValueError, with.forward(),
              "WithDefaults's forward() method expects at least 1 argument(s) and at most 3 "
              "argument(s), but received 0.");
  CHECK_ERROR(kiln::ValueError, with.forward(1, 2, 3.0, 4), "but received 4.");
  nn::AnyModule without(WithoutDefaults{});
  BOOST_TEST(without.forward<double>(1, 3, 5.0) == 9.0);
  CHECK_ERROR(kiln::ValueError, without.forward(1),
              "WithoutDefaults's forward() method expects 3 argument(s), but received 1. If "
              "(anonymous namespace)::WithoutDefaults's forward() method has default arguments");
  CHECK_ERROR(kiln::ValueError, nn::AnyModule(BadDefaults{}), "FORWARD_HAS_DEFAULT_ARGS of",
              "the defaults must be of the last parameters");

  nn::AnyModule any;
  CHECK_ERROR(kiln::Error, any.get<WithDefaults>(), "Cannot call get() on an empty AnyModule");
  CHECK_ERROR(kiln::Error, any.ptr(), "Cannot call ptr() on an empty AnyModule");
  CHECK_ERROR(kiln::Error, any.type_info(), "Cannot call type_info() on an empty AnyModule");
  any = std::make_shared<WithDefaults>();
  BOOST_TEST(any.forward<double>(0) == 5.0);
  nn::Linear linear(3, 4);
  any = linear.ptr();
  nn::Linear back = any.get<nn::Linear>();  // a holder sharing the module
  BOOST_TEST(back->weight.is_same(linear->weight));
  BOOST_TEST(any.get<nn::LinearImpl>().options.out_features() == 4);
  // ptr<T>() checks the type as get<T>() does (libtorch's any.cpp PtrWithBadDowncastThrows)
  BOOST_TEST(any.ptr<nn::Linear>() == linear.ptr());
  BOOST_TEST(any.ptr<nn::LinearImpl>() == linear.ptr());
  CHECK_ERROR(kiln::TypeError, any.ptr<nn::ReLU>(), "Attempted to cast module of type");
  CHECK_ERROR(kiln::Error, nn::AnyModule().ptr<nn::Linear>(),
              "Cannot call ptr() on an empty AnyModule");
}

BOOST_AUTO_TEST_SUITE_END()
