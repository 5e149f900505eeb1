// A fresh directory of the test's own under the test temp dir (mkdtemp), so that two CTest
// runs on one machine never write the same file; removed when the object goes.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

namespace testbed::testing_dirs {

class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    std::string tmpl = ::testing::TempDir() + "/testbed-" + tag + "-XXXXXX";
    if (!mkdtemp(tmpl.data())) ADD_FAILURE() << "mkdtemp failed for " << tmpl;
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace testbed::testing_dirs
