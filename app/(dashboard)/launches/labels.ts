/** The words a launch team uses for a launch's and a group's status (docs/decisions.md#launches). */
export const launchStatusLabel: Record<string, string> = {
  active: "Ativo",
  paused: "Pausado",
  closed: "Encerrado",
};

export const groupStatusLabel: Record<string, string> = {
  filling: "Enchendo",
  reserve: "Reserva",
  full: "Cheio",
  broken: "Com problema",
};

/** A group's name from the template: `{n}` is the group's position in the launch. */
export function groupNameFor(template: string, position: number): string {
  return template.replaceAll("{n}", String(position));
}

/** Phone numbers typed one per line or separated by commas: digits only, empty entries dropped. */
export function parseNumbers(text: string): string[] {
  return text
    .split(/[\n,;]+/)
    .map((s) => s.replace(/\D/g, ""))
    .filter((s) => s.length > 0);
}
