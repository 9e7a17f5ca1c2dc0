import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Link } from "react-router-dom";
import type { DeviceRead, DeviceUpdate, EmbodiedDefaultRead } from "../../client/types";
import { DeleteButton } from "../../components/Deletion/DeleteButton";
import { type Errors, Field, FormFooter, formErrorsFrom } from "../../components/Field";
import { QueryState } from "../../components/QueryState";
import { ScrollBox } from "../../components/ScrollBox";
import { TeamChip } from "../../components/Team/TeamChip";
import { formatBytes, formatCo2Kg, formatSize, parseSize, sig3 } from "../../lib/format";
import { useCan, useListTeam, useMayDelete } from "../../lib/role";
import { agentsQuery } from "../../queries/agents";
import { deleteDevice } from "../../queries/deletion";
import { devicesQuery, updateDevice } from "../../queries/devices";
import { embodiedDefaultsQuery } from "../../queries/energy";
import { keys } from "../../queries/keys";

const MEDIA = ["hdd", "ssd", "ram", "unknown"] as const;
type Media = (typeof MEDIA)[number];

const ALIASES: Record<string, string> = {
  media: "media",
  capacity_bytes: "capacity",
  embodied_kg: "embodied",
  embodied_source: "embodied_source",
  lifetime_years: "lifetime",
  name: "name",
  notes: "notes",
};

/** "≈ 20 kgCO2e per drive (source)" or per GB × capacity, from the server's defaults. */
function defaultEmbodied(d: EmbodiedDefaultRead | undefined, capacityBytes: number | null): string {
  if (!d) return "no default for this media";
  const parts: string[] = [];
  if (d.kg_per_drive != null) parts.push(`${formatCo2Kg(d.kg_per_drive)} per drive`);
  if (d.kg_per_gb != null) {
    parts.push(
      capacityBytes
        ? `${sig3(d.kg_per_gb)} kg per GB × ${formatBytes(capacityBytes)} = ${formatCo2Kg((d.kg_per_gb * capacityBytes) / 1e9)}`
        : `${sig3(d.kg_per_gb)} kgCO2e per GB`,
    );
  }
  return `${parts.join(" + ")} (range ${sig3(d.low)}–${sig3(d.high)} kg; ${d.source})`;
}

/** A capacity as typed back, in the size syntax parseSize reads: "4t" when a few digits say it
 * exactly in binary units, else the byte count ("4000000000000" for a 4 TB disk). */
function capacityText(bytes: number | null): string {
  if (!bytes) return "";
  const short = formatSize(bytes);
  return /^\d{1,4}[kmgtp]$/.test(short) ? short : String(bytes);
}

function DeviceForm({ device, onDone }: { device: DeviceRead; onDone: () => void }) {
  const qc = useQueryClient();
  const defaults = useQuery(embodiedDefaultsQuery());
  const [media, setMedia] = useState<Media>(MEDIA.find((m) => m === device.media) ?? "unknown");
  const [capacity, setCapacity] = useState(() => capacityText(device.capacity_bytes));
  const [embodied, setEmbodied] = useState(
    device.embodied_is_default || device.embodied_kg == null ? "" : String(device.embodied_kg),
  );
  const [source, setSource] = useState(
    device.embodied_is_default ? "" : (device.embodied_source ?? ""),
  );
  const [lifetime, setLifetime] = useState(String(device.lifetime_years));
  const [notes, setNotes] = useState(device.notes);
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: (body: DeviceUpdate) => updateDevice(device.id, body),
    onSuccess: () => {
      qc.invalidateQueries({ queryKey: keys.devices.all() });
      onDone();
    },
    onError: (err) => {
      const r = formErrorsFrom(err, ALIASES);
      setErrors(r.errors);
      setFormError(r.formError);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setErrors({});
    setFormError(null);
    const cap = capacity.trim() === "" ? null : parseSize(capacity.trim());
    if (capacity.trim() !== "" && cap === null) {
      setErrors({ capacity: { message: "enter a size such as 960g or 4t", source: "client" } });
      return;
    }
    save.mutate({
      media,
      capacity_bytes: cap,
      embodied_kg: embodied.trim() === "" ? null : Number(embodied),
      embodied_source: source.trim() || null,
      lifetime_years: Number(lifetime),
      notes,
    });
  };
  const def = defaults.data?.find((d) => d.media === media);
  return (
    <form className="form" onSubmit={submit} data-testid="device-form" noValidate>
      <div className="form-grid">
        <Field label="Media" name="media" errors={errors}>
          <select id="f-media" value={media} onChange={(e) => setMedia(e.target.value as Media)}>
            {MEDIA.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </Field>
        <Field label="Capacity" name="capacity" errors={errors} hint="e.g. 960g, 4t (GiB/TiB)">
          <input id="f-capacity" value={capacity} onChange={(e) => setCapacity(e.target.value)} />
        </Field>
        <Field
          label="Embodied carbon override (kgCO2e)"
          name="embodied"
          errors={errors}
          hint={`default: ${defaultEmbodied(def, device.capacity_bytes)}`}
        >
          <input
            id="f-embodied"
            inputMode="decimal"
            value={embodied}
            onChange={(e) => setEmbodied(e.target.value)}
            placeholder="empty: the default"
          />
        </Field>
        <Field label="Source of the override" name="embodied_source" errors={errors}>
          <input
            id="f-embodied_source"
            value={source}
            onChange={(e) => setSource(e.target.value)}
            placeholder="vendor's PCF sheet, 2025"
          />
        </Field>
        <Field
          label="Service life (years)"
          name="lifetime"
          errors={errors}
          hint="embodied carbon is spread over it"
        >
          <input
            id="f-lifetime"
            inputMode="decimal"
            value={lifetime}
            onChange={(e) => setLifetime(e.target.value)}
          />
        </Field>
        <Field
          label="Notes"
          name="notes"
          errors={errors}
          hint="the team's notes: slot, firmware, history"
        >
          <textarea
            id="f-notes"
            rows={3}
            value={notes}
            onChange={(e) => setNotes(e.target.value)}
            maxLength={20000}
            data-testid="device-notes-input"
          />
        </Field>
      </div>
      <FormFooter
        error={formError}
        pending={save.isPending}
        label="Save"
        pendingLabel="Save"
        testId="save-device"
      />
    </form>
  );
}

/** Admins delete a device; runs on it are listed first and detached on "Delete anyway". */
function DeleteDevice({ device }: { device: DeviceRead }) {
  const qc = useQueryClient();
  if (!useMayDelete(device.team_id)) return null;
  return (
    <DeleteButton
      label="Delete"
      title={`Delete the device ${device.name}?`}
      testId="delete-device"
      forceLabel="Delete anyway (keep the runs, without a device)"
      onDelete={(force) => deleteDevice(device.id, force)}
      onDone={() => {
        qc.invalidateQueries({ queryKey: keys.devices.all() });
        qc.invalidateQueries({ queryKey: keys.runs.lists() });
      }}
    >
      <p>
        Its media, capacity, embodied carbon and notes go. The agent's next run on it makes a fresh
        device.
      </p>
    </DeleteButton>
  );
}

export function Devices() {
  const list = useListTeam();
  const q = useQuery({ ...devicesQuery(list.teamId), enabled: list.ready });
  const agents = useQuery(agentsQuery());
  const [editing, setEditing] = useState<string | null>(null);
  const can = useCan();
  const agentName = (id: string) =>
    agents.data?.items.find((a) => a.id === id)?.name ?? id.slice(0, 8);
  return (
    <section>
      <h1>Devices</h1>
      <p className="muted small">
        Devices are found by the agents' inventories. Media and capacity choose the default embodied
        carbon (the CO2 of making the device), which is shared over its service life for each run.
      </p>
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && q.data.items.length === 0 && (
        <p className="muted">No devices yet: they appear when a run uses one.</p>
      )}
      {q.data && q.data.items.length > 0 && (
        <ScrollBox label="the team's devices">
          <table className="table" data-testid="devices-table">
            <thead>
              <tr>
                <th>Device</th>
                <th>Agent</th>
                <th>Kind</th>
                <th>Media</th>
                <th className="num">Capacity</th>
                <th className="num">Embodied carbon</th>
                <th className="num">Service life</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {q.data.items.flatMap((d) => [
                <tr key={d.id} data-testid="device-row">
                  {/* a by-id name or a declared key has no spaces: it wraps anywhere, never widens the page */}
                  <td style={{ overflowWrap: "anywhere", minWidth: "12rem" }}>
                    {d.name} <span className="muted small mono wrap">{d.key}</span>
                    <TeamChip teamId={d.team_id} />{" "}
                    <Link className="small" to={`/series?device_id=${d.id}`}>
                      series
                    </Link>
                    {d.notes && (
                      <div className="small pre-wrap" data-testid="device-notes">
                        {d.notes}
                      </div>
                    )}
                  </td>
                  <td>{agentName(d.agent_id)}</td>
                  <td>{d.kind}</td>
                  <td>{d.media ?? "—"}</td>
                  <td className="num">{formatBytes(d.capacity_bytes)}</td>
                  <td className="num" data-testid="device-embodied">
                    {formatCo2Kg(d.embodied_kg)}
                    <div className="muted small">
                      {d.embodied_kg == null
                        ? "no default for this media and capacity: set a figure"
                        : `${d.embodied_is_default ? "default" : "override"}: ${d.embodied_source ?? "no source"}`}
                    </div>
                  </td>
                  <td className="num">{sig3(d.lifetime_years)} years</td>
                  <td>
                    {can("device.edit", d.team_id) && (
                      <button
                        type="button"
                        className="btn btn-small"
                        onClick={() => setEditing(editing === d.id ? null : d.id)}
                      >
                        {editing === d.id ? "Close" : "Edit"}
                      </button>
                    )}{" "}
                    <DeleteDevice device={d} />
                  </td>
                </tr>,
                editing === d.id ? (
                  <tr key={`${d.id}-edit`}>
                    <td colSpan={8}>
                      <DeviceForm device={d} onDone={() => setEditing(null)} />
                    </td>
                  </tr>
                ) : null,
              ])}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </section>
  );
}
