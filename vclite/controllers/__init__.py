"""L5 controllers: each reads and writes API objects through the Client protocol only; they never
import the scheduler, the executor or each other's internals."""
