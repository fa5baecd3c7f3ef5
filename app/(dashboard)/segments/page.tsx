import type { Metadata } from "next";
import { Segments } from "./segments";

export const metadata: Metadata = { title: "Segmentos" };

export default function SegmentsPage() {
  return <Segments />;
}
