#include "config/envs.hpp"

#include <catch2/catch_test_macros.hpp>

#include <unistd.h>
#include <filesystem>
#include <string>
#include <vector>

using namespace cosmicac;
using namespace cosmicac::config;
using V = std::vector<std::string>;

namespace {
V env_of(std::string_view s) {
  auto r = parse_envs(s);
  INFO("ENVS: " << s);
  if (!r) FAIL("unexpected error: " << r.error());
  return *r;
}
Error error_of(std::string_view s) {
  auto r = parse_envs(s);
  INFO("ENVS: " << s);
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::ConfigInvalid);
  return r.error();
}
}  // namespace

TEST_CASE("ENVS: the script's corrupting cases come out right") {
  CHECK(env_of(R"(CFG={url:"http://h:8080/x",n:5})") == V{R"(CFG={"url":"http://h:8080/x","n":5})"});
  CHECK(env_of("CFG={name:llama,max_tokens:512}") == V{R"(CFG={"name":"llama","max_tokens":512})"});
  CHECK(env_of(R"(CFG={a:"x;y"};B=2)") == V{R"(CFG={"a":"x;y"})", "B=2"});
  CHECK(env_of("MSG=hello world") == V{"MSG=hello world"});
}

TEST_CASE("ENVS: shell syntax is data and nothing runs") {
  auto const marker = std::filesystem::temp_directory_path() / ("cosmicac-envs-" + std::to_string(::getpid()));
  std::filesystem::remove(marker);
  std::string const envs = "X=1 $(touch " + marker.string() + ");Y=`touch " + marker.string() + "`";
  CHECK(env_of(envs) == V{"X=1 $(touch " + marker.string() + ")", "Y=`touch " + marker.string() + "`"});
  CHECK_FALSE(std::filesystem::exists(marker));
  CHECK(env_of("A=$HOME;B=a=b=c;C=it's") == V{"A=$HOME", "B=a=b=c", "C=it's"});
}

TEST_CASE("ENVS: bare-word URL and the ':' rule") {
  CHECK(env_of("CFG={url:http://h:8080/x}") == V{R"(CFG={"url":"http://h:8080/x"})"});
  CHECK(env_of("CFG={a:b:c}") == V{R"(CFG={"a":"b:c"})"});
  CHECK(env_of("L=[a:b, -x, ./p, 1.2.3]") == V{R"(L=["a:b","-x","./p","1.2.3"])"});
  CHECK(env_of(R"(CFG={"k:x":1})") == V{R"(CFG={"k:x":1})"});
}

TEST_CASE("ENVS: numbers keep their text; non-numbers are strings") {
  CHECK(env_of("N=[1.50,1e3,-0,0.0,1E+9,-2.5e-3]") == V{"N=[1.50,1e3,-0,0.0,1E+9,-2.5e-3]"});
  CHECK(env_of("N=[01,+1,1.,.5,0x10,1e,NaN,Infinity,1_000]") ==
        V{R"(N=["01","+1","1.",".5","0x10","1e","NaN","Infinity","1_000"])"});
  CHECK(env_of("B={t:true,f:false,n:null,s:'true',q:\"null\"}") ==
        V{R"(B={"t":true,"f":false,"n":null,"s":"true","q":"null"})"});
}

TEST_CASE("ENVS: nesting, trailing commas, whitespace and quoting inside literals") {
  CHECK(env_of("C={ a : { b : [ 1 , 2 , ] , } , 'c d' : \"e\\\"f\" , }") == V{R"(C={"a":{"b":[1,2]},"c d":"e\"f"})"});
  CHECK(env_of("E={};F=[];G=[[]]") == V{"E={}", "F=[]", "G=[[]]"});
  CHECK(env_of(R"(S={a:'it\'s',b:"\u00e9\n\t",c:"\ud83d\ude00"})") ==
        V{"S={\"a\":\"it's\",\"b\":\"\xC3\xA9\\n\\t\",\"c\":\"\xF0\x9F\x98\x80\"}"});
  CHECK(env_of("U={k:caf\xC3\xA9}") == V{"U={\"k\":\"caf\xC3\xA9\"}"});
}

TEST_CASE("ENVS: quoted values are unquoted, the rest is literal") {
  CHECK(env_of(R"(A="x;y";B='p;q')") == V{"A=x;y", "B=p;q"});
  CHECK(env_of(R"(A="say \"hi\" \\ \n")") == V{R"(A=say "hi" \ \n)"});
  CHECK(env_of(R"(A='a\"b')") == V{R"(A=a\"b)"});
  CHECK(env_of(R"(A="{not:json}")") == V{"A={not:json}"});
  CHECK(env_of(R"(A="  padded  ")") == V{"A=  padded  "});
  CHECK(env_of("A=;B=") == V{"A=", "B="});
  CHECK(env_of("A=x\"y") == V{"A=x\"y"});
}

TEST_CASE("ENVS: entries are trimmed, value bodies are not; empty entries ignored") {
  CHECK(env_of("  A=1 ;\n B=two words\t;;\n;C= lead") == V{"A=1", "B=two words", "C= lead"});
  CHECK(env_of("A=line1\nline2") == V{"A=line1\nline2"});
  CHECK(env_of("A= {x:1}") == V{"A= {x:1}"});  // not a literal: the value starts with a space
  CHECK(env_of("") == V{});
  CHECK(env_of(" ;; \n ") == V{});
  CHECK(env_of("CFG={a:1}  ;B=2") == V{R"(CFG={"a":1})", "B=2"});
}

TEST_CASE("ENVS: errors name position and key, never the value") {
  auto e = error_of("A=1;secretvalue;C=3");
  CHECK(e.message == "ENVS entry 2: expected KEY=VALUE, found no '='");
  e = error_of("A=1;B");
  CHECK(e.message == "ENVS entry 2: expected KEY=VALUE, found no '='");
  e = error_of("A=1;;2BAD=x");
  CHECK(e.message == "ENVS entry 2: invalid variable name (must match [A-Za-z_][A-Za-z0-9_]*)");
  e = error_of("A B=x");
  CHECK(e.message.find("ENVS entry 1: invalid variable name (") == 0);
  e = error_of("OK=1;CFG={a:\"hunter2;B=2");
  CHECK(e.message.find("ENVS entry 2 (CFG): unterminated string") == 0);
  CHECK(e.message.find("hunter2") == std::string::npos);
  e = error_of("CFG={a:[1,2}");
  CHECK(e.message.find("ENVS entry 1 (CFG): expected ',' or ']'") == 0);
  e = error_of("P='hunter2");
  CHECK(e.message == "ENVS entry 1 (P): unterminated quote");
  e = error_of("P=\"hunter2\"x");
  CHECK(e.message == "ENVS entry 1 (P): text after the closing quote (quote the whole value)");
  CHECK(e.message.find("hunter2") == std::string::npos);
  e = error_of("P={a:1} trailing");
  CHECK(e.message == "ENVS entry 1 (P): unexpected text after the literal (missing ';'?)");
  e = error_of("P=bad\xFF");
  CHECK(e.message == "ENVS entry 1 (P): value is not valid UTF-8");
  e = error_of(std::string("P=a\0b", 5));
  CHECK(e.message == "ENVS entry 1 (P): value contains a NUL byte");
  e = error_of("P={a:1,a:2}");
  CHECK(e.message.find("duplicate key") != std::string::npos);
}

TEST_CASE("ENVS: the Env array as JSON") {
  CHECK(envs_to_json_array({}) == "[]");
  CHECK(envs_to_json_array({"A=1", R"(CFG={"a":"x;y"})", "M=\"q\"\n"}) ==
        R"(["A=1","CFG={\"a\":\"x;y\"}","M=\"q\"\n"])");
}

TEST_CASE("ENVS: encoder quotes what would be misread") {
  using P = std::vector<std::pair<std::string, EnvValue>>;
  CHECK(encode_envs(P{{"A", std::string("plain")}, {"B", std::string("")}}).value() == "A=plain;B=");
  CHECK(encode_envs(P{{"A", std::string("x;y")}}).value() == R"(A="x;y")");
  CHECK(encode_envs(P{{"A", std::string("{a:1}")}}).value() == R"(A="{a:1}")");
  CHECK(encode_envs(P{{"A", std::string(R"("q\)")}}).value() == R"(A="\"q\\")");
  CHECK(encode_envs(P{{"A", std::string(" pad")}}).value() == R"(A=" pad")");
  CHECK(encode_envs(P{{"J", nlohmann::json::parse(R"({"b":[1,"x;y"],"a":null})")}}).value() ==
        R"(J={"a":null,"b":[1,"x;y"]})");
  CHECK(encode_envs(P{{"S", nlohmann::json("str")}}).value() == R"(S="\"str\"")");
  auto bad = encode_envs(P{{"1X", std::string("v")}});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "ENVS variable 1: invalid name");
  auto dup = encode_envs(P{{"A", std::string("1")}, {"B", std::string("2")}, {"A", std::string("3")}});
  REQUIRE_FALSE(dup);
  CHECK(dup.error().message == "ENVS variable 3 (A): duplicate name, also variable 1");
  CHECK_FALSE(encode_envs(P{{"A", std::string("\xC0\x80")}}));
}

TEST_CASE("ENVS: a key given twice is an error naming both entries") {
  CHECK(error_of("A=1;A=2").message == "ENVS entry 2 (A): duplicate key, first set in entry 1");
  CHECK(error_of(" ;A=1;B={x:1};;C='y' ; A=\"pw\"").message == "ENVS entry 4 (A): duplicate key, first set in entry 1");
  CHECK(error_of("a=1;A=2;a=3").message == "ENVS entry 3 (a): duplicate key, first set in entry 1");
  CHECK(env_of("a=1;A=2;a_=3") == V{"a=1", "A=2", "a_=3"});  // names are case-sensitive
}

TEST_CASE("ENVS: an invalid key is never echoed, however short or printable") {
  for (std::string_view const envs :
       {"OK=1;2BAD=x", "OK=1;pw-part=x", "OK=1;Secret@db/x?sslmode=require", "OK=1;a b=c", "hunter2!=x"}) {
    auto const e = error_of(envs);
    INFO("ENVS: " << envs);
    CHECK(e.message.find("invalid variable name (must match") != std::string::npos);
    CHECK(e.message.find('"') == std::string::npos);
    for (std::string_view bad : {"2BAD", "pw-part", "Secret", "sslmode", "a b", "hunter2"})
      CHECK(e.message.find(bad) == std::string::npos);
  }
}

// Parsing was once quadratic in the number of entries: large adversarial
// inputs come out right. Timing is bench/parse's job, not a test's.
TEST_CASE("ENVS: 100,000 entries, and a duplicate of the first one at the end") {
  std::string envs;
  for (int k = 0; k < 100000; ++k) envs += "K" + std::to_string(k) + "=v" + std::to_string(k) + ";";
  auto const env = env_of(envs);
  REQUIRE(env.size() == 100000);
  CHECK(env.front() == "K0=v0");
  CHECK(env.back() == "K99999=v99999");
  CHECK(error_of(envs + "K0=again").message == "ENVS entry 100001 (K0): duplicate key, first set in entry 1");
}

TEST_CASE("ENVS: a literal of 150,000 keys") {
  std::string envs = "CFG={";
  for (int k = 0; k < 150000; ++k) envs += "k" + std::to_string(k) + ":" + std::to_string(k) + ",";
  envs += "}";
  auto const env = env_of(envs);
  REQUIRE(env.size() == 1);
  CHECK(env[0].starts_with(R"(CFG={"k0":0,"k1":1,)"));
  CHECK(env[0].ends_with(R"("k149999":149999})"));
}
