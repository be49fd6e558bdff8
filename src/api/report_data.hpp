#pragma once
// What a public Report or ProcessInspection keeps of the run that produced it (the core's values,
// shared and immutable), so that to_json() renders exactly what the CLI would.

#include "cudadiag/types.hpp"
#include "inspect/loaded_components.hpp"
#include "report/report.hpp"

#include <memory>

namespace cudadiag::detail {

struct ReportData {
  report::Report report;
};

struct InspectionData {
  inspect::ProcessInspection inspection;
};

// The one place that reads and writes the private members of the public values.
struct Access {
  static void attach(Report& out, std::shared_ptr<const ReportData> data) { out.m_data = std::move(data); }
  static const ReportData* data(const Report& report) { return report.m_data.get(); }
  static void attach(ProcessInspection& out, std::shared_ptr<const InspectionData> data) {
    out.m_data = std::move(data);
  }
  static const InspectionData* data(const ProcessInspection& inspection) { return inspection.m_data.get(); }
};

} // namespace cudadiag::detail
