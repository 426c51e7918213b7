// The audiences' record layer, for contacts/: audience and membership rows, the membership
// writes of a contact (each with its subscriber.* event) and the plan cap. audiences/service.ts
// builds its rules on contacts/service.ts (subscribing an address creates the contact), so
// contacts cannot import that face without a cycle; it reads and writes memberships through
// this one, which imports nothing of contacts/ (docs/architecture.md, "Walls").
export {
  audiencesAmong,
  customFieldsOf,
  findAudience,
  membershipsOf,
  type AudienceRow,
  type Membership,
  type SubscriberRow,
} from './records.ts';
export { deleteMemberships, emitSubscriberEvents, insertMemberships, setSubscribed } from './subscribers.ts';
export { SUBSCRIBER_LIMITS, takeSubscriberPlaces, workspacePlan } from './caps.ts';
