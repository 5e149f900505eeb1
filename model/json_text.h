// JSON text as JavaScript's JSON.stringify writes it (the seeds' SDK is TypeScript): object
// members in the Json's order, numbers as Number.prototype.toString prints them (2, not 2.0;
// 1e-7, not 1e-07). Shared by the model (maxValueBytes counts these bytes) and the ports.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace testbed::model {

std::string JsonStringify(const nlohmann::json& v);

}  // namespace testbed::model
