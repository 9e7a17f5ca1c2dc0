import { describe, expect, it } from "vitest";
import {
  formatCo2,
  formatCo2Kg,
  formatEnergy,
  formatEnergyPm,
  formatGridIntensity,
  formatIopsPerWatt,
  formatJPerGb,
  formatJPerMio,
  formatMBpsPerWatt,
  formatWatts,
  formatWithUnit,
} from "./format";

describe("formatWatts", () => {
  it("picks mW, W or kW", () => {
    expect(formatWatts(61.24)).toBe("61.2 W");
    expect(formatWatts(264.18)).toBe("264 W");
    expect(formatWatts(0.85)).toBe("850 mW");
    expect(formatWatts(1234)).toBe("1.23 kW");
    expect(formatWatts(0)).toBe("0 W");
    expect(formatWatts(null)).toBe("—");
  });
});

describe("formatEnergy", () => {
  it("uses J, kJ, MJ and kWh from 1 kWh up", () => {
    expect(formatEnergy(850)).toBe("850 J");
    // the paper's 264.18 W × 15 s
    expect(formatEnergy(3962.7)).toBe("3.96 kJ");
    expect(formatEnergy(2.5e6)).toBe("2.5 MJ");
    expect(formatEnergy(3.6e6)).toBe("1 kWh");
    expect(formatEnergy(7.2e6)).toBe("2 kWh");
    expect(formatEnergy(undefined)).toBe("—");
  });

  it("shows an uncertainty in the value's unit and precision", () => {
    expect(formatEnergyPm(3962.7, 12.3)).toBe("3.963 ± 0.012 kJ");
    expect(formatEnergyPm(3962.7, 300)).toBe("3.96 ± 0.30 kJ");
    expect(formatEnergyPm(850, 20)).toBe("850 ± 20 J");
    expect(formatEnergyPm(850, null)).toBe("850 J");
    expect(formatEnergyPm(null, 3)).toBe("—");
  });
});

describe("carbon", () => {
  it("formats grams of CO2e with g / kg / t", () => {
    expect(formatCo2(0.0123)).toBe("0.0123 gCO2e");
    expect(formatCo2(12.34)).toBe("12.3 gCO2e");
    expect(formatCo2(4500)).toBe("4.5 kgCO2e");
    expect(formatCo2(2e6)).toBe("2 tCO2e");
    expect(formatCo2Kg(15)).toBe("15 kgCO2e");
    expect(formatCo2Kg(0.5)).toBe("500 gCO2e");
    expect(formatGridIntensity(380)).toBe("380 gCO2e/kWh");
  });
});

describe("efficiency", () => {
  it("formats J/GB, J per million I/Os, IOPS/W and MB/s/W", () => {
    expect(formatJPerGb(123.4)).toBe("123 J/GB");
    expect(formatJPerMio(45.6)).toBe("45.6 J/M I/Os");
    expect(formatIopsPerWatt(1234)).toBe("1.23k IOPS/W");
    expect(formatMBpsPerWatt(12.34)).toBe("12.3 MB/s/W");
  });

  it("maps the server's energy units in compare metrics", () => {
    expect(formatWithUnit(61.2, "W")).toBe("61.2 W");
    expect(formatWithUnit(3962.7, "J")).toBe("3.96 kJ");
    expect(formatWithUnit(4500, "gCO2e")).toBe("4.5 kgCO2e");
    expect(formatWithUnit(123, "J/GB")).toBe("123 J/GB");
    expect(formatWithUnit(45.6, "J/MIO")).toBe("45.6 J/M I/Os");
    expect(formatWithUnit(1234, "IO/J")).toBe("1.23k IOPS/W");
    expect(formatWithUnit(12.34, "MB/J")).toBe("12.3 MB/s/W");
  });
});
