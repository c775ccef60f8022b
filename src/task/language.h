#pragma once
// Texts given per language (issue 45; docs/xlsx.md#languages): a title, a
// label, a sheet name or a totals label may come as one text or as an
// object of language tag → text ({"zh-CN": "状态", "en": "Status"}). A task
// shows each in one language, chosen once from the task's locale and the
// definition's default language, so every attempt writes the same file.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace export_center::task {

// Whose language a text is shown in.
struct Languages {
  std::string locale{};            // the task's (BCP 47); "" = the definition's default
  std::string default_language{};  // the definition's `locale`; "" = none
};

// At most this many languages per text; each tag has the shape of a task's
// locale (task::IsLocaleTag, task.h: the one check of a language tag).
inline constexpr size_t kMaxLanguages = 32;

// The index into `tags` of the text to show, by the agreed rule: the
// locale's exact tag (ASCII case-insensitive), then its primary subtag
// ("en-US" → "en"); the same two steps for the default language; else the
// first entry. REQUIRES: !tags.empty(). Pure, thread-safe.
size_t ChooseLanguage(const std::vector<std::string_view>& tags, const Languages& languages);

// A text kept as given until a task picks its language: one entry with tag
// "" for a plain text, else (tag, text) per language in the order given.
struct LocalizedText {
  std::vector<std::pair<std::string, std::string>> texts{};

  static LocalizedText Plain(std::string text);
  bool empty() const { return texts.empty(); }
  // The text in `languages` (ChooseLanguage); "" when empty.
  const std::string& In(const Languages& languages) const;
};

}  // namespace export_center::task
