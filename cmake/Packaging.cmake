# The Debian package an operator installs (docs/deploy.md#packages). scripts/package.sh
# builds the server alone in build-package/ and runs cpack on it; the package test
# (tests/deploy/package_test.py) packages the binary the other tests ran.
#
#   /usr/bin/export-center                          the binary, stripped
#   /usr/lib/systemd/system/export-center.service   deploy/systemd/, never enabled by the package
#   /etc/export-center/export-center.yaml           conffile: config/export-center.sample.yaml
#   /etc/export-center/export-center.env            conffile: the secrets, all commented out
#   /usr/share/export-center/prometheus/            the alert rules (deploy/prometheus/)
#   /usr/share/doc/export-center/                   deploy.md, configuration.md, CHANGELOG.md,
#                                                   examples/ (the other sample configurations)
# Maintainer scripts and the conffile list: deploy/debian/.

# `cpack` installs only what is listed here, and without building every target first:
# the package needs export-center alone, not the tests or the benchmarks.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

install(TARGETS export-center RUNTIME DESTINATION bin)
install(FILES deploy/systemd/export-center.service DESTINATION lib/systemd/system)
# 0640: the package's postinst gives them the group export-center (dpkg-statoverride).
install(FILES config/export-center.sample.yaml DESTINATION /etc/export-center
        RENAME export-center.yaml PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ)
install(FILES deploy/debian/export-center.env DESTINATION /etc/export-center
        PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ)
install(FILES deploy/prometheus/export-center.rules.yml
        DESTINATION share/export-center/prometheus)
install(FILES docs/deploy.md docs/configuration.md DESTINATION share/doc/export-center)
# The upgrade notes per release; OPTIONAL keeps a tree without it packageable.
install(FILES CHANGELOG.md DESTINATION share/doc/export-center OPTIONAL)
install(FILES config/rocketmq.sample.yaml DESTINATION share/doc/export-center/examples)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME export-center)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "export-center maintainers <export-center@example.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "shared export and download center")
# The control file's long description (the summary above is its first line).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "One binary (export-center serve) runs the HTTP API, the outbox publisher, the
consumers and the reconciler; any number of instances share a task store
(PostgreSQL, MySQL/MariaDB or SQLite), a command channel (embedded or RocketMQ)
and file storage (local or S3-compatible). Ships a systemd unit (not enabled),
a sample configuration under /etc/export-center and Prometheus alert rules.")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The Debian revision of this build of the release: 1.0.0-1.
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# The shared libraries' packages come from dpkg-shlibdeps (dpkg-dev); adduser for postinst.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/deploy/debian/conffiles ${PROJECT_SOURCE_DIR}/deploy/debian/postinst
    ${PROJECT_SOURCE_DIR}/deploy/debian/prerm ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
include(CPack)
