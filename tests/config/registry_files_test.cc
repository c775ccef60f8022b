// Definition keys for files: template-file, split/rows-per-file, csv-gzip.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/registry_yaml.h"
#include "render/xlsx_template_writer.h"
#include "render/zip_stream.h"

namespace export_center::config {
namespace {

using registry::ExportDefinition;
using registry::RegistrySnapshot;

const char kBase[] = R"(
provider-services:
  customer-service:
    base-url: http://127.0.0.1:8081
    internal-token: token-1234567890
definitions:
  CUSTOMER_LIST:
    provider-service: customer-service
    provider-path: /internal/exports/v1/CUSTOMER_LIST/batches
    required-permission: platform:customer:export
    parameters:
      - {name: title, type: STRING}
)";

class FileSink final : public ByteSink {
 public:
  explicit FileSink(const std::string& path) : out_(path, std::ios::binary) {}
  Status Append(std::string_view b) override {
    out_.write(b.data(), static_cast<std::streamsize>(b.size()));
    return Status::Ok();
  }

 private:
  std::ofstream out_;
};

// A minimal .xlsx whose sheet holds `cells` (inline strings in row 1..n, column A).
std::string WriteTemplate(const std::string& path, const std::vector<std::string>& cells) {
  FileSink sink(path);
  render::ZipStreamWriter zip(&sink, render::ZipOptions{});
  auto part = [&](const std::string& name, const std::string& xml) {
    EXPECT_TRUE(zip.BeginEntry(name).ok());
    EXPECT_TRUE(zip.Write(xml).ok());
    EXPECT_TRUE(zip.EndEntry().ok());
  };
  std::string rows;
  for (size_t i = 0; i < cells.size(); ++i) {
    const std::string r = std::to_string(i + 1);
    rows += "<row r=\"" + r + "\"><c r=\"A" + r + "\" t=\"inlineStr\"><is><t>" + cells[i] +
            "</t></is></c></row>";
  }
  part("xl/workbook.xml",
       "<workbook xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\"/>");
  part("xl/worksheets/sheet1.xml",
       "<worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\">"
       "<sheetData>" +
           rows + "</sheetData></worksheet>");
  EXPECT_TRUE(zip.Finish().ok());
  return path;
}

class RegistryFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ec_registry_files_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string File(const std::string& name) const { return (dir_ / name).string(); }

  // Templates are checked by the template writer's reader, as app/ wires it.
  static StatusOr<RegistrySnapshot> Parse(const std::string& extra) {
    auto inspect = [](std::string_view bytes) -> StatusOr<TemplateInfo> {
      EC_ASSIGN_OR_RETURN(render::XlsxTemplateInfo info, render::InspectXlsxTemplate(bytes));
      return TemplateInfo{info.single_values, render::XlsxTemplateBuiltins()};
    };
    return ParseRegistry(std::string(kBase) + extra, inspect);
  }
  static void ExpectProblem(const std::string& extra, const std::string& text) {
    auto parsed = Parse(extra);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.status().message().find(text), std::string::npos)
        << "want: " << text << "\ngot: " << parsed.status().message();
  }

  std::filesystem::path dir_;
};

TEST_F(RegistryFiles, TemplateFileIsLoadedAndChecked) {
  const std::string ok =
      WriteTemplate(File("ok.xlsx"), {"{title} {taskName}", "{.id}", "{rowCount}"});
  auto parsed = Parse("    template-file: " + ok + "\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const ExportDefinition* def = parsed->Find("CUSTOMER_LIST");
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->template_file, ok);
  ASSERT_NE(def->template_bytes, nullptr);
  EXPECT_EQ(def->template_bytes->substr(0, 2), "PK");

  const std::string unknown = WriteTemplate(File("unknown.xlsx"), {"{owner}", "{.id}"});
  ExpectProblem("    template-file: " + unknown + "\n",
                "uses {owner}, which is neither a declared parameter nor a built-in");
  const std::string no_list = WriteTemplate(File("nolist.xlsx"), {"{title}"});
  ExpectProblem("    template-file: " + no_list + "\n", "template has no list row");
  const std::string count_above = WriteTemplate(File("above.xlsx"), {"{rowCount}", "{.id}"});
  ExpectProblem("    template-file: " + count_above + "\n", "{rowCount}");
  std::ofstream(File("junk.xlsx")) << "not a zip";
  ExpectProblem("    template-file: " + File("junk.xlsx") + "\n", "not a readable .xlsx");
  ExpectProblem("    template-file: " + File("missing.xlsx") + "\n",
                "definitions.CUSTOMER_LIST.template-file: cannot read");
  ExpectProblem("    template-file: " + ok + "\n    split: files\n    rows-per-file: 10\n",
                "files cannot be combined with template-file");
}

TEST_F(RegistryFiles, TemplateFileWithoutAnInspectorIsAProblemNotACrash) {
  const std::string ok = WriteTemplate(File("ok.xlsx"), {"{title}", "{.id}"});
  auto parsed = ParseRegistry(std::string(kBase) + "    template-file: " + ok + "\n", nullptr);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("template-file: \"" + ok + "\" cannot be checked"),
            std::string::npos)
      << parsed.status().message();
}

TEST_F(RegistryFiles, SplitFilesNeedsRowsPerFile) {
  auto parsed = Parse("    split: files\n    rows-per-file: 100000\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->Find("CUSTOMER_LIST")->rows_per_file, 100000);
  ASSERT_TRUE(Parse("    split: sheets\n").ok());
  EXPECT_EQ(Parse("")->Find("CUSTOMER_LIST")->rows_per_file, 0);
  ExpectProblem("    split: files\n", "rows-per-file: is required with split: files");
  ExpectProblem("    rows-per-file: 10\n", "rows-per-file: is only for split: files");
  ExpectProblem("    split: books\n", "split");
  ExpectProblem("    split: files\n    rows-per-file: 0\n", "rows-per-file");
}

TEST_F(RegistryFiles, CsvGzip) {
  EXPECT_FALSE(Parse("")->Find("CUSTOMER_LIST")->csv_gzip);
  auto parsed = Parse("    csv-gzip: true\n");
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->Find("CUSTOMER_LIST")->csv_gzip);
  ExpectProblem("    csv-gzip: maybe\n", "csv-gzip");
}

}  // namespace
}  // namespace export_center::config
