"""One version everywhere (docs/deploy.md#versions): CMakeLists.txt's project VERSION
is the release; every Maven artifact (sdk-java/**/pom.xml, the sample service and the
version of the SDK it depends on, the MyBatis conformance module) carries the same one,
the C++ SDK's generated sdk/sdk_version.h says it too, CHANGELOG.md has a section for
it, and RELEASES names only older releases, each with its CHANGELOG section.

A release bump therefore edits CMakeLists.txt and the POMs together, or this fails
naming each file that disagrees.

Run: /usr/bin/python3 versions_test.py BUILD_DIR
"""
import glob
import os
import re
import sys
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pylib"))
from export_center_testkit import REPO, project_version, releases  # noqa: E402

BUILD_DIR = None
NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def version_tuple(version):
    return tuple(int(p) for p in version.split("."))


def poms():
    found = glob.glob(os.path.join(REPO, "sdk-java", "**", "pom.xml"), recursive=True)
    found += [os.path.join(REPO, "examples", "order-service-java", "pom.xml"),
              os.path.join(REPO, "tests", "source", "sql", "sql_template", "mybatis_conformance",
                           "pom.xml")]
    return sorted(p for p in found if "/target" not in p)


def pom_versions(path):
    """{what: version} for the export-center versions a POM states."""
    root = ET.parse(path).getroot()
    out = {}
    group = root.findtext("m:groupId", namespaces=NS)
    parent = root.find("m:parent", NS)
    if parent is not None and parent.findtext("m:groupId", namespaces=NS) == "io.exportcenter":
        out["parent version"] = parent.findtext("m:version", namespaces=NS)
    if root.findtext("m:version", namespaces=NS) is not None and (
            group or "").startswith("io.exportcenter"):
        out["version"] = root.findtext("m:version", namespaces=NS)
    prop = root.findtext("m:properties/m:export-center.version", namespaces=NS)
    if prop is not None:
        out["export-center.version"] = prop
    for dep in root.iterfind(".//m:dependency", NS):
        version = dep.findtext("m:version", namespaces=NS)
        if dep.findtext("m:groupId", namespaces=NS) == "io.exportcenter" and version and \
                not version.startswith("${"):
            out["dependency " + dep.findtext("m:artifactId", namespaces=NS)] = version
    return out


class VersionsTest(unittest.TestCase):
    def test_every_pom_has_the_project_version(self):
        want = project_version()
        checked = 0
        wrong = []
        for path in poms():
            for what, version in pom_versions(path).items():
                checked += 1
                if version != want:
                    wrong.append(f"{os.path.relpath(path, REPO)}: {what} {version}")
        self.assertGreaterEqual(checked, 7)  # the parent, 4 modules, the sample, conformance
        self.assertEqual(wrong, [], f"CMakeLists.txt says {want}")

    def test_the_sample_and_every_module_are_seen(self):
        paths = [os.path.relpath(p, REPO) for p in poms()]
        for path in ("sdk-java/pom.xml", "sdk-java/export-center-spring-boot-starter/pom.xml",
                     "sdk-java/export-center-mybatis/pom.xml", "examples/order-service-java/pom.xml"):
            self.assertIn(path, paths)
        self.assertIn("export-center.version",
                      pom_versions(os.path.join(REPO, "examples/order-service-java/pom.xml")))

    def test_the_cpp_sdk_header_says_the_project_version(self):
        path = os.path.join(BUILD_DIR, "generated", "ec_sdk", "sdk", "sdk_version.h")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.assertIn(f'#define EXPORT_CENTER_SDK_VERSION "{project_version()}"', text)
        major, minor, patch = project_version().split(".")
        self.assertIn(f"#define EXPORT_CENTER_SDK_VERSION_MAJOR {major}\n", text)
        self.assertIn(f"#define EXPORT_CENTER_SDK_VERSION_MINOR {minor}\n", text)
        self.assertIn(f"#define EXPORT_CENTER_SDK_VERSION_PATCH {patch}\n", text)

    def test_the_changelog_has_this_release_and_every_earlier_one(self):
        with open(os.path.join(REPO, "CHANGELOG.md"), encoding="utf-8") as f:
            headings = re.findall(r"^## (\d+\.\d+\.\d+)\b", f.read(), re.M)
        self.assertEqual(headings[0], project_version(), "the newest section comes first")
        self.assertEqual(headings, sorted(headings, key=version_tuple, reverse=True))
        for version, _ in releases():
            self.assertLess(version_tuple(version), version_tuple(project_version()),
                            "RELEASES names the project version: bump CMakeLists.txt")
            self.assertIn(version, headings)


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
