#pragma once
// Splits a fuzz input into the answers a business service gives, one per
// call, for the fuzzers of both data routes: answers are separated by a NUL
// byte (JSON never holds one), and an answer starting with three digits and
// a space has that HTTP status (else 200). Calls past the last answer get the
// last one again.

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "tests/fakes/scripted_http_client.h"

namespace export_center::source::fuzz {

inline std::vector<fakes::ScriptedAnswer> SplitAnswers(std::string_view in) {
  std::vector<fakes::ScriptedAnswer> out;
  while (true) {
    const size_t nul = in.find('\0');
    std::string_view part = in.substr(0, nul);
    fakes::ScriptedAnswer answer;
    if (part.size() >= 4 && std::isdigit(static_cast<unsigned char>(part[0])) &&
        std::isdigit(static_cast<unsigned char>(part[1])) &&
        std::isdigit(static_cast<unsigned char>(part[2])) && part[3] == ' ') {
      answer.status = (part[0] - '0') * 100 + (part[1] - '0') * 10 + (part[2] - '0');
      part.remove_prefix(4);
    }
    answer.body = std::string(part);
    out.push_back(std::move(answer));
    if (nul == std::string_view::npos) break;
    in.remove_prefix(nul + 1);
  }
  return out;
}

// Hands out `answers` in order, the last one again when they run out, as
// the HTTP client's answers (fakes::ScriptedHttpClientFactory: judged as one
// read from the wire, size cap included); counts the calls in `next`.
inline fakes::ScriptedHttpClientFactory::Script AnswerInOrder(
    const std::vector<fakes::ScriptedAnswer>* answers, size_t* next) {
  return [answers, next](const fakes::RecordedCall&) {
    const size_t i = *next < answers->size() ? *next : answers->size() - 1;
    ++*next;
    return (*answers)[i];
  };
}

}  // namespace export_center::source::fuzz
