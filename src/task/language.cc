#include "task/language.h"

#include "common/ascii.h"

namespace export_center::task {
namespace {

// "en-US" → "en"; a tag without a subtag is its own primary subtag.
std::string_view PrimarySubtag(std::string_view tag) { return tag.substr(0, tag.find('-')); }

// The exact tag, then the primary subtag of `wanted`; tags.size() when neither.
size_t Find(const std::vector<std::string_view>& tags, std::string_view wanted) {
  if (wanted.empty()) return tags.size();
  for (size_t i = 0; i < tags.size(); ++i) {
    if (EqualsIgnoreCaseAscii(tags[i], wanted)) return i;
  }
  const std::string_view primary = PrimarySubtag(wanted);
  if (primary.size() == wanted.size()) return tags.size();
  for (size_t i = 0; i < tags.size(); ++i) {
    if (EqualsIgnoreCaseAscii(tags[i], primary)) return i;
  }
  return tags.size();
}

}  // namespace

size_t ChooseLanguage(const std::vector<std::string_view>& tags, const Languages& languages) {
  for (std::string_view wanted :
       {std::string_view(languages.locale), std::string_view(languages.default_language)}) {
    const size_t found = Find(tags, wanted);
    if (found < tags.size()) return found;
  }
  return 0;
}

LocalizedText LocalizedText::Plain(std::string text) {
  LocalizedText out;
  out.texts.emplace_back("", std::move(text));
  return out;
}

const std::string& LocalizedText::In(const Languages& languages) const {
  static const std::string kNone;
  if (texts.empty()) return kNone;
  std::vector<std::string_view> tags;
  tags.reserve(texts.size());
  for (const auto& [tag, text] : texts) tags.push_back(tag);
  return texts[ChooseLanguage(tags, languages)].second;
}

}  // namespace export_center::task
